"""Run records over time: what `run`, `fleet` and `bench` wrote, read for PR summaries and the
status page."""
