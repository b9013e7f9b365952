"""`fmp job script`: the sbatch script for a resilient distributed training job."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fm_platform.cli.main import main


def script(argv: list[str], capsys: Any) -> str:
    assert main(["job", "script", *argv]) == 0
    return capsys.readouterr().out


def sbatch_directives(text: str) -> list[str]:
    return [
        line.removeprefix("#SBATCH ") for line in text.splitlines() if line.startswith("#SBATCH")
    ]


def test_directives_nodes_partition_and_fsx_logs(capsys: Any) -> None:
    text = script(
        [
            "--nodes",
            "4",
            "--tasks-per-node",
            "8",
            "--partition",
            "workers",
            "--job-name",
            "llama",
            "--",
            "python",
            "train.py",
        ],
        capsys,
    )
    assert text.startswith("#!/bin/bash\n")
    assert sbatch_directives(text) == [
        "--job-name=llama",
        "--nodes=4",
        "--ntasks-per-node=8",
        "--partition=workers",
        "--exclusive",
        "--output=/fsx/logs/%x-%j.out",
        "--error=/fsx/logs/%x-%j.err",
    ]


def test_default_partition_is_left_to_slurm(capsys: Any) -> None:
    text = script(["--", "python", "train.py"], capsys)
    assert not any(d.startswith("--partition") for d in sbatch_directives(text))
    assert "--nodes=1" in sbatch_directives(text)


def test_checkpoint_dir_master_and_auto_resume(capsys: Any) -> None:
    text = script(["--job-name", "llama", "--", "python", "train.py"], capsys)
    lines = text.splitlines()
    assert "export CHECKPOINT_DIR=/fsx/checkpoints/llama" in lines
    assert 'MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"' in lines
    assert "export MASTER_ADDR" in lines
    assert "export MASTER_PORT=29500" in lines
    guard = lines.index("if [ -d /opt/sagemaker_cluster ]; then")
    assert lines[guard + 1].strip() == "SRUN_ARGS+=(--auto-resume=1)"
    assert lines[-1] == 'srun "${SRUN_ARGS[@]}" python train.py'
    assert "resume from its latest" in text
    assert "checkpoint in $CHECKPOINT_DIR" in text


def test_custom_checkpoint_dir_mount_and_port(capsys: Any) -> None:
    text = script(
        [
            "--fsx-mount",
            "/lustre",
            "--checkpoint-dir",
            "/lustre/ckpt/run 1".replace(" ", "-"),
            "--master-port",
            "12345",
            "--",
            "train",
        ],
        capsys,
    )
    assert "export CHECKPOINT_DIR=/lustre/ckpt/run-1" in text.splitlines()
    assert "--output=/lustre/logs/%x-%j.out" in sbatch_directives(text)
    assert "export MASTER_PORT=12345" in text.splitlines()


def test_command_words_keep_variables_live_and_spaces_together(capsys: Any) -> None:
    text = script(
        [
            "--",
            "torchrun",
            "--nproc-per-node",
            "8",
            "train.py",
            "--ckpt",
            "$CHECKPOINT_DIR",
            "--note",
            'say "hi" now',
        ],
        capsys,
    )
    assert text.splitlines()[-1] == (
        'srun "${SRUN_ARGS[@]}" torchrun --nproc-per-node 8 train.py '
        '--ckpt "$CHECKPOINT_DIR" --note "say \\"hi\\" now"'
    )


def test_script_passes_shellcheck_and_bash_syntax(capsys: Any, tmp_path: Path) -> None:
    path = tmp_path / "job.sbatch"
    assert (
        main(
            [
                "job",
                "script",
                "--output",
                str(path),
                "--",
                "python",
                "train.py",
                "--resume-from",
                "$CHECKPOINT_DIR",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == ""
    assert path.stat().st_mode & stat.S_IXUSR
    subprocess.run(["bash", "-n", str(path)], check=True)
    checked = subprocess.run(["shellcheck", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--nodes", "0", "--", "x"], "--nodes must be at least 1, got 0"),
        (["--tasks-per-node", "-2", "--", "x"], "--tasks-per-node must be at least 1, got -2"),
        (["--job-name", "my job", "--", "x"], "--job-name 'my job' must be 1-128 letters"),
        (["--partition", "a;b", "--", "x"], "--partition 'a;b' must be letters"),
        (["--checkpoint-dir", "ckpt", "--", "x"], "--checkpoint-dir 'ckpt' must be an absolute"),
        (["--master-port", "80", "--", "x"], "--master-port must be 1024-65535, got 80"),
        ([], "give the training command after `--`"),
    ],
)
def test_invalid_options_are_one_line_errors(argv: list[str], message: str, capsys: Any) -> None:
    assert main(["job", "script", *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("fmp: error: ")
    assert message in captured.err
    assert captured.err.count("\n") == 1


def test_every_problem_is_reported_at_once(capsys: Any) -> None:
    assert main(["job", "script", "--nodes", "0", "--tasks-per-node", "0"]) == 1
    err = capsys.readouterr().err
    assert "--nodes" in err
    assert "--tasks-per-node" in err
    assert "training command" in err


def test_unwritable_output_is_an_error(capsys: Any, tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "job.sbatch"
    assert main(["job", "script", "--output", str(target), "--", "x"]) == 1
    assert capsys.readouterr().err.startswith(f"fmp: error: cannot write {target}")
