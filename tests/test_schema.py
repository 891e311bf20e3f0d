"""The JSON Schema editors read (`tipcgen schema`): every spec the loader accepts validates against
it (the bundled ones, and every spec imported from the corpus), and it rejects the topology forms
validation rejects where JSON Schema can say so."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from conftest import SPECS
from tipcgen.cli import app
from tipcgen.spec.schema import spec_schema


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = spec_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _errors(validator, data) -> list:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]


def test_bundled_specs_validate(validator):
    specs = sorted(SPECS.glob("*.yml"))
    assert specs
    for path in specs:
        assert not _errors(validator, YAML(typ="safe").load(path.read_text(encoding="utf-8"))), path


def _with_topology(topology) -> dict:
    data = YAML(typ="safe").load((SPECS / "mobilenet_v3_small.yml").read_text(encoding="utf-8"))
    name = next(iter(data["suites"]))
    data["suites"][name]["topology"] = topology
    return data


@pytest.mark.parametrize(
    "topology",
    [[0], ["cpu"], [" CPU "], ["-1"], [[0, 1]], [{"gpus": [0, 1]}], [{"ips": ["10.0.0.1", "10.0.0.2"], "gpu": 3}],
     [{"cpus": 2}], [0, [0, 1], "cpu"]],
)  # fmt: skip
def test_topology_shorthands_validate(validator, topology):
    assert not _errors(validator, _with_topology(topology))


@pytest.mark.parametrize(
    "topology",
    [[-1], [1024], ["gpu"], [True], [[0, -2]], [{"gpus": [0], "bogus": 1}], [{"cpus": 0}], [], "0"],
)
def test_topology_forms_validation_refuses_are_refused(validator, topology):
    assert _errors(validator, _with_topology(topology))


@pytest.mark.corpus
def test_every_spec_imported_from_the_corpus_validates(corpus, tmp_path, validator):
    from typer.testing import CliRunner

    runner = CliRunner()
    checked = 0
    failures = []
    for repo in sorted(p for p in corpus.iterdir() if p.is_dir()):
        out = tmp_path / repo.name
        result = runner.invoke(app, ["import", str(repo), "--out", str(out)])
        # A bad config is skipped (exit 1) and named; the rest is written and checked here.
        assert result.exit_code in (0, 1), result.output
        if result.exit_code == 1:
            assert "skipped" in result.output and "error: empty file" in result.output, result.output
        for path in sorted(out.glob("*.yml")):
            checked += 1
            errors = _errors(validator, YAML(typ="safe").load(path.read_text(encoding="utf-8")))
            if errors:
                failures.append(f"{path.name}: {errors[:3]}")
    assert checked > 100, "the corpus import wrote too few specs to say anything"
    assert not failures, "\n".join(failures[:20])
