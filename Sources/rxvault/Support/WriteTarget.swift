import Foundation
import RxVault

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a command that creates or replaces `path` writes (`restore`, `backup`, `extract`,
/// `export`, ...). A symbolic link is followed to the file it points to (through chains of
/// links, relative ones read from the link's folder), even when that file is not there yet: the
/// new file goes there and the link stays as it is. Renaming over the link instead would silently
/// turn it into a file and leave what it pointed to behind (for a vault, a `.bak` beside the
/// link and the real vault untouched). A directory is refused: nothing is written "into" one.
enum WriteTarget {
    /// `example` names a file to suggest inside a directory given by mistake (e.g. vault.rxv).
    static func file(for path: String, example: String? = nil) throws -> String {
        var current = path
        var hops = 0
        while true {
            var info = stat()
            guard lstat(current, &info) == 0 else { return current }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                let folder = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
                throw CLIError(.usage, "\(path) is a directory; give the path of the file to write",
                               hint: example.map { "for example \(folder)/\($0)" })
            case S_IFLNK:
                hops += 1
                guard hops <= 40 else { throw CLIError(.usage, "\(path): too many levels of symbolic links") }
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlink(current, &buffer, buffer.count - 1)
                guard n > 0 else { throw CLIError(.cannotWrite, "cannot read the link \(current): \(String(cString: strerror(errno)))") }
                let destination = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                current = destination.hasPrefix("/") ? destination : PathText.join(PathText.folder(of: current), destination)
            default:
                return current
            }
        }
    }
}
