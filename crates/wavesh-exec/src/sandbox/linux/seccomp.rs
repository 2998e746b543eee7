//! The seccomp filters: the network-off one and the one that keeps TCP and UDP, compiled
//! once per process.

use super::*;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The compiled filter of `which`, built once per process.
pub(super) fn program(which: Filter) -> io::Result<&'static BpfProgram> {
    static OFF: std::sync::OnceLock<Result<BpfProgram, String>> = std::sync::OnceLock::new();
    static ON: std::sync::OnceLock<Result<BpfProgram, String>> = std::sync::OnceLock::new();
    let cell = match which {
        Filter::NetworkOff => &OFF,
        Filter::NetworkOn => &ON,
    };
    cell.get_or_init(|| compile(which).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| io::Error::other(e.clone()))
}

#[cfg(target_arch = "x86_64")]
pub(super) const ARCH: Option<seccompiler::TargetArch> = Some(seccompiler::TargetArch::x86_64);
#[cfg(target_arch = "aarch64")]
pub(super) const ARCH: Option<seccompiler::TargetArch> = Some(seccompiler::TargetArch::aarch64);
#[cfg(target_arch = "riscv64")]
pub(super) const ARCH: Option<seccompiler::TargetArch> = Some(seccompiler::TargetArch::riscv64);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
pub(super) const ARCH: Option<seccompiler::TargetArch> = None;

/// The obsolete packet socket type (`SOCK_PACKET`, deprecated in libc in favour of
/// `AF_PACKET`, which the domain rule refuses anyway).
pub(super) const SOCK_PACKET: u64 = 10;

/// The seccomp filter (SBX-2). Network off: no socket at all but `socketpair` of unix
/// sockets (pipes between a command's own processes), which covers TCP, UDP, DNS, raw and
/// packet sockets, netlink and unix sockets outside (`docker.sock`, the ssh agent). With
/// the network exception only IPv4/IPv6 non-raw sockets are added back. Always: no
/// io_uring (its operations pass by seccomp), no typing into a terminal (TIOCSTI,
/// TIOCLINUX), no kernel keyrings, no module loading, kexec, reboot or swap, no bpf, and
/// no change to the machine's clock, host name, mounts, accounting or kernel log.
/// A 32-bit system call from the 64-bit shell kills the process (the architecture
/// check of the filter); on x86-64 the x32 numbers of the refused calls are refused too.
#[allow(
    clippy::unnecessary_cast,
    reason = "ioctl numbers are c_ulong, which is not u64 on every target"
)]
pub(super) fn compile(which: Filter) -> Result<BpfProgram, seccompiler::BackendError> {
    let Some(arch) = ARCH else {
        return Err(seccompiler::BackendError::InvalidTargetArch(
            std::env::consts::ARCH.to_owned(),
        ));
    };
    let cond = |arg: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, len, op, value)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let socket_rules = match which {
        Filter::NetworkOff => Vec::new(),
        Filter::NetworkOn => vec![
            SeccompRule::new(vec![
                cond(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Ne,
                    libc::AF_INET as u64,
                )?,
                cond(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Ne,
                    libc::AF_INET6 as u64,
                )?,
            ])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_RAW as u64,
            )?])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                SOCK_PACKET,
            )?])?,
        ],
    };
    rules.insert(libc::SYS_socket, socket_rules);
    // A socketpair is a pipe between the command's own processes: unix, and connected
    // for good. A datagram pair can `connect` or `sendto` a named unix socket outside
    // (SBX-7); a stream or seqpacket pair is connected to its peer, where the kernel
    // refuses another `connect` (EISCONN) and ignores a `sendto` address. Rust's
    // `Command` passes a pidfd over a seqpacket pair, so cargo needs that kind.
    rules.insert(
        libc::SYS_socketpair,
        vec![
            SeccompRule::new(vec![cond(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )?])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_DGRAM as u64,
            )?])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_RAW as u64,
            )?])?,
        ],
    );
    let ioctl_rules = vec![
        SeccompRule::new(vec![cond(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::TIOCSTI as u64,
        )?])?,
        SeccompRule::new(vec![cond(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::TIOCLINUX as u64,
        )?])?,
    ];
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_bpf,
        // The machine's own state, which a command run as root could otherwise change
        // whatever Landlock allows: the clock, the host name, mounts (including the
        // read-only binds that protect `.git/hooks` and `.claude/`), file handles that
        // reach files by inode rather than by path, accounting and the kernel log.
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_settimeofday,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_open_by_handle_at,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_syslog,
    ] {
        rules.insert(call, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    #[allow(unused_mut)]
    let mut program: BpfProgram = filter.try_into()?;
    #[cfg(target_arch = "x86_64")]
    {
        // x32 system calls are the x86-64 architecture's with bit 30 set in the number,
        // so the rules above, on exact numbers, would not see them. All of them are
        // refused with one test ahead of the rules: nothing a command runs uses x32, and
        // a copy of every rule for it doubled the filter, which the kernel compiles
        // again for every command (about 0.3 ms for 400 instructions).
        const LOAD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, seccomp_data.nr at 0
        const JSET: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
        const RET: u16 = 0x06; // BPF_RET | BPF_K
        const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
        let x32 = [
            seccompiler::sock_filter {
                code: LOAD_NR,
                jt: 0,
                jf: 0,
                k: 0,
            },
            seccompiler::sock_filter {
                code: JSET,
                jt: 0,
                jf: 1,
                k: 0x4000_0000,
            },
            seccompiler::sock_filter {
                code: RET,
                jt: 0,
                jf: 0,
                k: SECCOMP_RET_ERRNO | libc::EPERM as u32,
            },
        ];
        program.splice(0..0, x32);
    }
    Ok(program)
}
