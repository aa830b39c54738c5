"""Provenance facts: commit, dirtiness (no GPU needed); the config hash is the settings' (test_config)."""

import subprocess

from matmulstudy.study import provenance


def repository(path):
    """A git repository at `path` with one commit of f.txt and reports/r.csv."""
    def git(*args):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (path / "f.txt").write_text("one\n")
    (path / "reports").mkdir()
    (path / "reports" / "r.csv").write_text("a\n")
    git("add", ".")
    git("commit", "-qm", "c")


def test_git_state_of_a_repository(tmp_path):
    repository(tmp_path)
    state = provenance.git_state(tmp_path)
    assert len(state["git_commit"]) == 40 and state["git_dirty"] is False
    (tmp_path / "reports" / "r.csv").write_text("b\n")     # the study's own output
    assert provenance.git_state(tmp_path)["git_dirty"] is False
    (tmp_path / "f.txt").write_text("two\n")
    assert provenance.git_state(tmp_path)["git_dirty"] is True


def test_without_git_the_commit_can_be_named(tmp_path, monkeypatch):
    monkeypatch.setenv("MATMULSTUDY_GIT_COMMIT", "abc123")
    assert provenance.git_state(tmp_path) == {"git_commit": "abc123", "git_dirty": None}


def test_a_named_commit_wins_over_a_stale_checkout(tmp_path, monkeypatch):
    """A synced copy whose .git is older than its files: the named commit is recorded."""
    repository(tmp_path)
    monkeypatch.setenv("MATMULSTUDY_GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567")
    assert provenance.git_state(tmp_path) == {"git_commit": "0123456789abcdef0123456789abcdef01234567",
                                              "git_dirty": None}


def test_run_facts_have_every_field():
    facts = provenance.run_facts("0123456789ab")
    assert set(facts) == {"git_commit", "git_dirty", "config_hash", "host", "slurm_job_id", "python", "timestamp"}
