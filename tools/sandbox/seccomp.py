"""The sandbox's seccomp filter: a classic BPF program, built here, loaded by the runner.

The runner installs it (PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP) after its own start-up and
before the code runs, so the code can never remove it. It is a deny list on top of the jail's
namespaces; what each group stops:

- execve, execveat, fork, vfork, clone without CLONE_THREAD: no programs or processes
  (`os.system`, `subprocess`, a fork bomb); threads still start;
- clone, unshare and setns with namespace flags, the mount family, pivot_root, chroot: no new
  view of the file system, no other namespace;
- socket, socketpair: no socket of any family (TCP, UDP, Unix such as Postgres's, netlink);
- ptrace, process_vm_*, kcmp, pidfd_getfd: no reading or steering another process;
- bpf, perf_event_open, userfaultfd, io_uring, the keyring, kexec, modules, reboot and the
  like: less of the kernel to attack;
- clone3 is answered ENOSYS, so the C library falls back to clone, whose flags are checked.

Any other architecture than the one the table is written for (x86_64) kills the call; on
other machines `build_filter` returns None and the sandbox reports seccomp as unavailable.
"""

from __future__ import annotations

import errno
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000

# x86_64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl)
DENIED_X86_64: dict[str, int] = {
    "socket": 41, "socketpair": 53, "fork": 57, "vfork": 58, "execve": 59,
    "ptrace": 101, "syslog": 103, "mknod": 133, "personality": 135, "vhangup": 153,
    "pivot_root": 155, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165,
    "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "quotactl": 179, "lookup_dcookie": 212,
    "clock_settime": 227, "kexec_load": 246, "add_key": 248, "request_key": 249,
    "keyctl": 250, "mknodat": 259, "unshare": 272, "perf_event_open": 298,
    "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "execveat": 322, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "pidfd_getfd": 438,
}
CLONE_X86_64 = 56
CLONE3_X86_64 = 435
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

_LD_ABS_W = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build_filter(machine: str | None = None) -> bytes | None:
    """The filter as `struct sock_filter` entries (8 bytes each), or None for an architecture
    this table does not cover."""
    if (machine or platform.machine()) != "x86_64":
        return None
    denied = sorted(set(DENIED_X86_64.values()))
    n = len(denied)
    # layout: 0 ld arch | 1 jeq | 2 kill | 3 ld nr | 4 x32 | 5.. denied | clone3 | clone |
    #         ld flags | jset namespaces | jset thread | ALLOW | EPERM | ENOSYS
    clone3_at = 5 + n
    clone_at = clone3_at + 1
    allow_at = clone_at + 5
    eperm_at, enosys_at = allow_at + 1, allow_at + 2

    def to(target: int, pc: int) -> int:
        offset = target - pc - 1
        assert 0 <= offset <= 255
        return offset

    prog = [
        _insn(_LD_ABS_W, 0, 0, 4),
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _insn(_RET_K, 0, 0, RET_KILL_PROCESS),
        _insn(_LD_ABS_W, 0, 0, 0),
        _insn(_JGE_K, to(eperm_at, 4), 0, _X32_BIT),
    ]
    for i, nr in enumerate(denied):
        prog.append(_insn(_JEQ_K, to(eperm_at, 5 + i), 0, nr))
    prog += [
        _insn(_JEQ_K, to(enosys_at, clone3_at), 0, CLONE3_X86_64),
        _insn(_JEQ_K, 0, to(allow_at, clone_at), CLONE_X86_64),
        _insn(_LD_ABS_W, 0, 0, 16),  # clone's flags: args[0], low 32 bits (little endian)
        _insn(_JSET_K, to(eperm_at, clone_at + 2), 0, CLONE_NAMESPACES),
        _insn(_JSET_K, to(allow_at, clone_at + 3), 0, CLONE_THREAD),
        _insn(_RET_K, 0, 0, RET_ERRNO | errno.EPERM),  # a new process, not a thread
        _insn(_RET_K, 0, 0, RET_ALLOW),
        _insn(_RET_K, 0, 0, RET_ERRNO | errno.EPERM),
        _insn(_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
    ]
    assert len(prog) == enosys_at + 1
    return b"".join(prog)
