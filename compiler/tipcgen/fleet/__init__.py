"""Run a multi-node suite on every node at once over OpenSSH (`tipcgen fleet`).

The system `ssh` does all remote work (BatchMode, the user's ssh config); nothing here
speaks a protocol of its own. The stages, one module each:

- `ssh`: argv for ssh and the POSIX shell snippets run on a node (digests, copy, run, stop, gather);
- `nodes`: which nodes a suite has, their working directories, the files they must share;
- `preflight`: connect to every node within a bound, compare digests, `--sync` the files;
- `session`: start the suite on every node, stream `[ip]`-prefixed output, stop all on a failure;
- `gather`: each node's status log, step logs and worker logs into `<log_dir>/nodes/<ip>/`;
- `report`: per-node step results from the status lines; JSON and JUnit (a testsuite per node).
"""
