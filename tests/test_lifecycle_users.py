"""Shared users in the lifecycle assets: accounts with the same uid on every node, homes on
the shared file system, one SSH key pair per user authorized in that home."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.lifecycle_support import (
    WORKER_IPS,
    Clock,
    asset_module,
    commands,
    make_root,
    provision,
)

USERS = """\
# the team
alice,2001
bob 2002
carol, 2003, /fsx/carol
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_root(tmp_path)
    (tmp_path / "etc/skel").mkdir()
    (tmp_path / "etc/skel/.bashrc").write_text("# bashrc\n")
    return tmp_path


def with_users(root: Path, text: str = USERS) -> Path:
    users = root / "shared_users.txt"
    users.write_text(text)
    return users


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_accounts_homes_and_keys_are_set_up(root: Path) -> None:
    result = provision(root, WORKER_IPS[0], "--users-file", str(with_users(root)))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = commands(root)
    for name, uid, home in (
        ("alice", 2001, "/fsx/home/alice"),
        ("bob", 2002, "/fsx/home/bob"),
        ("carol", 2003, "/fsx/carol"),
    ):
        assert f"groupadd --gid {uid} {name}" in lines
        assert (
            f"useradd --uid {uid} --gid {uid} --home-dir {home} --no-create-home "
            f"--shell /bin/bash {name}"
        ) in lines
        directory = root / home.lstrip("/")
        assert mode(directory) == 0o750
        assert (directory / ".bashrc").read_text() == "# bashrc\n"
        assert f"chown {uid}:{uid} {directory}" in lines
        assert mode(directory / ".ssh") == 0o700
        assert f"chown {uid}:{uid} {directory}/.ssh" in lines
        assert any(
            line.startswith(f"ssh-keygen -q -t ed25519 -N '' -C {name}@hyperpod -f {directory}/")
            for line in lines
        )
    # Every account exists before any home is made, and before Slurm starts.
    last_useradd = max(i for i, line in enumerate(lines) if line.startswith("useradd"))
    first_home = lines.index(f"chown 2001:2001 {root}/fsx/home/alice")
    assert last_useradd < first_home < lines.index("systemctl enable --now slurmd")
    config = (root / "etc/ssh/ssh_config.d/fmp-cluster-nodes.conf").read_text()
    assert "Host ip-*\n    StrictHostKeyChecking no\n    UserKnownHostsFile /dev/null" in config


def test_reference_format_lines_work_as_they_are(root: Path) -> None:
    users = asset_module("node_users")
    parsed = users.read_users("user1,2001,/fsx/user1\nuser2,2002,/fsx/user2\n", "/x", (1000, 60000))
    assert [(u.name, u.uid, u.home) for u in parsed] == [
        ("user1", 2001, "/fsx/user1"),
        ("user2", 2002, "/fsx/user2"),
    ]


def test_existing_matching_account_is_kept(root: Path) -> None:
    with (root / "etc/passwd").open("a") as passwd:
        passwd.write("alice:x:2001:2001::/fsx/home/alice:/bin/bash\n")
    with (root / "etc/group").open("a") as group:
        group.write("alice:x:2001:\n")
    result = provision(root, WORKER_IPS[0], "--users-file", str(with_users(root, "alice,2001\n")))
    assert result.returncode == 0, result.stdout
    assert not any(line.startswith(("useradd", "groupadd")) for line in commands(root))
    assert "user alice (uid 2001) already exists" in result.stdout
    assert (root / "fsx/home/alice/.ssh").is_dir()


def test_existing_home_keeps_its_content_and_mode(root: Path) -> None:
    home = root / "fsx/home/alice"
    home.mkdir(parents=True)
    home.chmod(0o755)
    (home / "notes.txt").write_text("mine\n")
    assert provision(root, WORKER_IPS[0], "--users-file", str(with_users(root))).returncode == 0
    assert mode(home) == 0o755
    assert (home / "notes.txt").read_text() == "mine\n"
    assert not (home / ".bashrc").exists()


def test_accounts_that_disagree_are_reported_together_before_any_change(root: Path) -> None:
    with (root / "etc/passwd").open("a") as passwd:
        passwd.write("alice:x:2005:2005::/fsx/home/alice:/bin/bash\n")
        passwd.write("dave:x:2002:2002::/home/dave:/bin/bash\n")
    with (root / "etc/group").open("a") as group:
        group.write("staff:x:2003:\neve:x:3000:\n")
    text = USERS + "eve,2004\n"
    result = provision(root, WORKER_IPS[0], "--users-file", str(with_users(root, text)))
    assert result.returncode != 0
    message = next(line for line in result.stdout.splitlines() if "ERROR" in line)
    for part in (
        "shared_users.txt disagrees with this node: ",
        "alice exists with uid 2005, not 2001",
        "uid 2002 of bob belongs to dave",
        "gid 2003 of carol belongs to group staff",
        "group eve exists with gid 3000, not 2004",
    ):
        assert part in message
    assert not any(line.startswith(("useradd", "groupadd")) for line in commands(root))
    assert not (root / "fsx/home").exists()
    assert "systemctl enable --now slurmd" not in commands(root)


def test_bad_lines_are_named_together(root: Path) -> None:
    (root / "etc/login.defs").write_text("UID_MIN 5000\nUID_MAX 6000\n")
    text = "Alice,5001\nbob,4000\ncarol,5003,home/carol\ndan\nerin,5005\nerin,5006\n"
    result = provision(root, WORKER_IPS[0], "--users-file", str(with_users(root, text)))
    assert result.returncode != 0
    message = next(line for line in result.stdout.splitlines() if "ERROR" in line)
    for part in (
        "line 1 ('Alice,5001'): user name must be [a-z_][a-z0-9_-]*",
        "line 2 ('bob,4000'): uid must be a number from 5000 to 6000",
        "line 3 ('carol,5003,home/carol'): home must be an absolute, normalized path",
        "line 4 ('dan'): expected name,uid or name,uid,home",
        "line 6 ('erin,5006'): user erin is listed twice",
    ):
        assert part in message


def test_no_users_file_sets_up_no_users(root: Path) -> None:
    result = provision(root, WORKER_IPS[0])
    assert result.returncode == 0
    assert "no shared users to set up" in result.stdout
    assert not (root / "etc/ssh/ssh_config.d").exists()


class Keygen(asset_module("node_system").System):
    """A System that runs nothing: ``ssh-keygen -f PATH`` writes a fake pair at PATH (and, with
    ``rival``, a pair of another node at the final names first), chown is recorded."""

    def __init__(self, root: Path, host: str, rival: bool = False, clock: Clock | None = None):
        clock = clock or Clock()
        super().__init__(str(root), dry_run=False, sleep=clock.sleep, clock=clock.clock)
        self.host, self.rival, self.ran, self.owners = host, rival, [], {}

    def run(self, *command, check=True):
        self.ran.append(command)
        if command[0] == "ssh-keygen":
            path = Path(command[command.index("-f") + 1])
            if self.rival:
                (path.parent / "id_ed25519").write_text("PRIVATE rival\n")
                (path.parent / "id_ed25519.pub").write_text("ssh-ed25519 RIVAL alice@hyperpod\n")
            path.write_text(f"PRIVATE {self.host}\n")
            path.with_name(path.name + ".pub").write_text(
                f"ssh-ed25519 KEY{self.host} alice@hyperpod\n"
            )
        return 0

    def chown(self, path, uid, gid):
        self.owners[str(path)] = (uid, gid)


def alice(home_root: str = "/fsx/home"):
    return asset_module("node_users").SharedUser("alice", 2001, f"{home_root}/alice")


def test_first_node_creates_the_key_pair_and_others_use_it(tmp_path: Path) -> None:
    users = asset_module("node_users")
    home = tmp_path / "fsx/home/alice"
    home.mkdir(parents=True)
    first = Keygen(tmp_path, "a")
    users.ensure_key_pair(first, alice(), home, 60, 1)
    ssh = home / ".ssh"
    assert (ssh / "id_ed25519").read_text() == "PRIVATE a\n"
    assert (mode(ssh / "id_ed25519"), mode(ssh / "id_ed25519.pub")) == (0o600, 0o644)
    assert (ssh / "authorized_keys").read_text() == "ssh-ed25519 KEYa alice@hyperpod\n"
    assert mode(ssh / "authorized_keys") == 0o600
    assert sorted(p.name for p in ssh.iterdir()) == [
        "authorized_keys",
        "id_ed25519",
        "id_ed25519.pub",
    ]
    assert first.owners[str(ssh / "id_ed25519")] == (2001, 2001)
    second = Keygen(tmp_path, "b")
    users.ensure_key_pair(second, alice(), home, 60, 1)
    assert not any(command[0] == "ssh-keygen" for command in second.ran)
    assert (ssh / "authorized_keys").read_text() == "ssh-ed25519 KEYa alice@hyperpod\n"


def test_node_that_loses_the_race_uses_the_winners_pair(tmp_path: Path, capsys) -> None:
    users = asset_module("node_users")
    home = tmp_path / "fsx/home/alice"
    home.mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh/authorized_keys").write_text("ssh-ed25519 OTHER someone")  # no newline
    users.ensure_key_pair(Keygen(tmp_path, "a", rival=True), alice(), home, 60, 1)
    ssh = home / ".ssh"
    assert (ssh / "id_ed25519").read_text() == "PRIVATE rival\n"
    assert (ssh / "authorized_keys").read_text() == (
        "ssh-ed25519 OTHER someone\nssh-ed25519 RIVAL alice@hyperpod\n"
    )
    assert not list(ssh.glob(".id_ed25519.*"))
    assert "another node created" in capsys.readouterr().out


def test_public_key_without_private_key_fails_after_the_bound(tmp_path: Path) -> None:
    users = asset_module("node_users")
    home = tmp_path / "fsx/home/alice"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_ed25519.pub").write_text("ssh-ed25519 STALE alice@hyperpod\n")
    clock = Clock()
    with pytest.raises(users.ProvisionError, match=r"still not ready.*: if no node is creating"):
        users.ensure_key_pair(Keygen(tmp_path, "a", clock=clock), alice(), home, 30, 5)
    assert clock.pauses == [5, 10, 15]


def test_private_key_without_public_key_is_an_error(tmp_path: Path) -> None:
    users = asset_module("node_users")
    home = tmp_path / "fsx/home/alice"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_ed25519").write_text("PRIVATE lone\n")
    with pytest.raises(users.ProvisionError, match="has no public key beside it"):
        users.ensure_key_pair(Keygen(tmp_path, "a"), alice(), home, 30, 5)
