import CRxProcess
import Foundation
import RxCrypto

/// The one place that keeps an rxvault process's memory out of core dumps and out of swap
/// (SECURITY.md, "Keys in memory"), run first in `main`, before any argument is parsed.
///
/// Every process rxvault runs is this binary: owner and client commands, `serve`, the unlock
/// agent (`_agent`) and the attachment checker child (`_parse-untrusted`), so all of them are
/// covered by this one call, and none can forget it. A decrypted record is as sensitive as a
/// key, and a command may hold thousands of them, so the whole process is kept from dumping,
/// not only the pages of its keys. An exec'd program (the pager, an editor) starts dumpable
/// again, as the kernel does on exec, but inherits RLIMIT_CORE 0.
enum ProcessProtection {
    /// Turns core dumps off (`rx_process_forbid_core_dumps`) and has a failure to lock key
    /// memory said once on stderr; nil, or why the process cannot be protected.
    static func apply() -> String? {
        SecretMemory.onLockRefused = {
            Terminal.warning(
                "could not lock key memory (RLIMIT_MEMLOCK, see 'ulimit -l'): keys may be written to swap; use encrypted swap"
            )
        }
        let status = rx_process_forbid_core_dumps()
        guard status == 0 else { return "cannot turn core dumps off: \(String(cString: strerror(-status)))" }
        return nil
    }
}
