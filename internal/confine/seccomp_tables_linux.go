package confine

// The system call numbers the seccomp filter needs, per ABI, from the
// kernel's tables (golang.org/x/sys/unix's zsysnum_linux_*.go, which a
// test checks them against). They are kept here for every ABI, not only
// the build's, because a process may exec a program of the other ABI of
// its kernel.

const (
	auditArchX8664   = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchARM     = 0x40000028
)

var x8664 = sysnums{audit: auditArchX8664, x32: true, nr: map[string]uint32{
	"socket": 41, "clone": 56, "setpgid": 109, "setsid": 112, "ptrace": 101, "pivot_root": 155, "mount": 165, "umount2": 166,
	"init_module": 175, "delete_module": 176, "kexec_load": 246, "add_key": 248, "request_key": 249,
	"keyctl": 250, "unshare": 272, "perf_event_open": 298, "setns": 308, "process_vm_readv": 310,
	"process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
	"userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
	"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
	"clone3": 435, "pidfd_getfd": 438, "mount_setattr": 442, "open_tree_attr": 467,
}}

var i386 = sysnums{audit: auditArchI386, nr: map[string]uint32{
	"mount": 21, "umount": 22, "ptrace": 26, "setpgid": 57, "setsid": 66, "umount2": 52, "socketcall": 102, "clone": 120,
	"init_module": 128, "delete_module": 129, "pivot_root": 217, "kexec_load": 283, "add_key": 286,
	"request_key": 287, "keyctl": 288, "unshare": 310, "perf_event_open": 336, "setns": 346,
	"process_vm_readv": 347, "process_vm_writev": 348, "kcmp": 349, "finit_module": 350, "bpf": 357,
	"socket": 359, "userfaultfd": 374, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
	"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
	"clone3": 435, "pidfd_getfd": 438, "mount_setattr": 442, "open_tree_attr": 467,
}}

var aarch64 = sysnums{audit: auditArchAarch64, nr: map[string]uint32{
	"umount2": 39, "mount": 40, "pivot_root": 41, "unshare": 97, "kexec_load": 104, "init_module": 105,
	"delete_module": 106, "ptrace": 117, "setpgid": 154, "setsid": 157, "socket": 198, "add_key": 217, "request_key": 218, "keyctl": 219,
	"clone": 220, "perf_event_open": 241, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271,
	"kcmp": 272, "finit_module": 273, "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294,
	"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
	"move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435,
	"pidfd_getfd": 438, "mount_setattr": 442, "open_tree_attr": 467,
}}

var arm = sysnums{audit: auditArchARM, nr: map[string]uint32{
	"mount": 21, "ptrace": 26, "umount2": 52, "setpgid": 57, "setsid": 66, "clone": 120, "init_module": 128, "delete_module": 129,
	"pivot_root": 218, "socket": 281, "add_key": 309, "request_key": 310, "keyctl": 311, "unshare": 337,
	"kexec_load": 347, "perf_event_open": 364, "setns": 375, "process_vm_readv": 376,
	"process_vm_writev": 377, "kcmp": 378, "finit_module": 379, "bpf": 386, "userfaultfd": 388,
	"kexec_file_load": 401, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
	"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
	"clone3": 435, "pidfd_getfd": 438, "mount_setattr": 442, "open_tree_attr": 467,
}}
