import Foundation

/// Polls `condition` (every `interval` seconds) until it holds or `seconds` have passed, and
/// says whether it held: a test waits for what it expects, as briefly as the machine allows,
/// instead of sleeping a fixed time that is too long on a fast machine and too short on a
/// loaded one.
public func eventually(within seconds: Double, every interval: Double = 0.02, _ condition: () throws -> Bool) rethrows
    -> Bool
{
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(useconds_t(interval * 1_000_000))
    }
    return try condition()
}
