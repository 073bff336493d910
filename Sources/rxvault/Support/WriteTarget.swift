import Foundation
import RxVault

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file a command that creates or replaces `path` writes (`restore`, `backup`, `extract`,
/// `export`, `preview`, `trend --out`, `client add --identity-out`), and whether it can be
/// written at all.
///
/// Every command checks its output path here first, before a passphrase is asked for or any work
/// is done, so a path that can never be a new file costs nothing (exit 73, docs/reference.md "Exit
/// codes"); the writer checks again when it writes (`SafeFileWriter`), as the file system may
/// have changed meanwhile. Refused: a path ending in `/`, a directory (nothing is written "into"
/// one), something that is not a regular file (a device such as /dev/null, a FIFO, a socket: a
/// rename would replace the node itself), a path whose folder is a file or does not exist
/// (unless the command creates folders, as `restore` does), and an existing file without
/// `replace` (--force).
///
/// A symbolic link as the last part of the path of an output file (an export, an extracted
/// attachment, a preview, a chart, a backup, an identity) is never written through: a link
/// planted where a command's output goes (in a shared folder, or by another program) would
/// otherwise get its output written wherever the link points, or a file created there when the
/// link dangles (SECURITY.md, "Files rxvault writes"). It is refused (73) unless `replace`
/// (--force), and then the link itself is replaced by the new file; what it pointed to is left as
/// it is. A link to a directory is a directory, as before. `SafeFileWriter` opens the file beside
/// the link with `openat` and `O_NOFOLLOW` and renames over the link, never through it.
///
/// A vault's own path (`followsLinks`: `restore`, and the checks of `init` and `copy`, as
/// before) is where the owner keeps the vault, often a link into a synced folder: followed to the
/// file it points to (through chains of links, relative ones read from the link's folder), even
/// when that file is not there yet, and the link stays. Renaming over the link instead would
/// silently turn it into a file and leave what it pointed to behind (for a vault, a `.bak` beside
/// the link and the real vault untouched).
enum WriteTarget {
    /// `example` names a file to suggest inside a directory given by mistake (e.g. vault.rxv);
    /// `existsHint` gives the hint for a file that is already there (from the file the path names).
    static func file(
        for path: String, replace: Bool, createsFolders: Bool = false, followsLinks: Bool = false,
        example: String? = nil, existsHint: ((String) -> String)? = nil
    ) throws -> String {
        guard !path.isEmpty else { throw CLIError(.usage, "the path of the file to write is empty") }
        if path.hasSuffix("/") {
            if isDirectory(path) { throw directory(path, example: example) }
            throw CLIError(.alreadyExists, "\(path) ends in '/': give the path of the file to write, not of a folder")
        }
        var current = path
        var hops = 0
        while true {
            var info = stat()
            guard lstat(current, &info) == 0 else {
                let error = errno
                guard error == ENOENT || error == ENOTDIR else {
                    throw CLIError(.alreadyExists, "cannot create \(path): \(String(cString: strerror(error)))")
                }
                try checkFolder(of: current, for: path, createsFolders: createsFolders)
                return current
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                if !replace {
                    throw CLIError(
                        .alreadyExists, "\(path) already exists",
                        hint: existsHint?(current) ?? "pass --force to replace it")
                }
                return current
            case S_IFDIR:
                throw directory(path, example: example)
            case S_IFLNK where !followsLinks:
                if isDirectory(current) { throw directory(path, example: example) }
                if !replace { throw link(path, dangling: stat(current, &info) != 0) }
                return current
            case S_IFLNK:
                hops += 1
                guard hops <= 40 else { throw CLIError(.alreadyExists, "\(path): too many levels of symbolic links") }
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlink(current, &buffer, buffer.count - 1)
                guard n > 0 else {
                    throw CLIError(.cannotWrite, "cannot read the link \(current): \(String(cString: strerror(errno)))")
                }
                let destination = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                current =
                    destination.hasPrefix("/") ? destination : PathText.join(PathText.folder(of: current), destination)
            default:
                throw CLIError(
                    .alreadyExists,
                    "\(path) is not a regular file (a device, FIFO or socket); rxvault writes only regular files",
                    hint: "give the path of a new file")
            }
        }
    }

    /// A link where an output file goes: not written through, so not written without --force.
    private static func link(_ path: String, dangling: Bool) -> CLIError {
        CLIError(
            .alreadyExists,
            "\(path) is a symbolic link\(dangling ? " to a file that does not exist" : ""); rxvault does not write through links",
            hint:
                "pass --force to replace the link itself with the file (what it points to is left as it is), or give another path"
        )
    }

    private static func directory(_ path: String, example: String?) -> CLIError {
        let folder = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        return CLIError(
            .alreadyExists, "\(path) is a directory; give the path of the file to write",
            hint: example.map { "for example \(folder)/\($0)" })
    }

    /// The folder `file` goes in must be a folder, and must exist unless the command creates it.
    private static func checkFolder(of file: String, for path: String, createsFolders: Bool) throws {
        var folder = PathText.folder(of: file)
        var missing: String?
        while true {
            var info = stat()
            if stat(folder, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw CLIError(.alreadyExists, "cannot create \(path): \(folder) is not a directory")
                }
                if let missing, !createsFolders {
                    throw CLIError(
                        .alreadyExists, "cannot create \(path): the directory \(missing) does not exist",
                        hint: "create it first")
                }
                return
            }
            let error = errno
            guard error == ENOENT || error == ENOTDIR, folder != "/", folder != "." else {
                throw CLIError(.alreadyExists, "cannot create \(path): \(folder): \(String(cString: strerror(error)))")
            }
            missing = missing ?? folder
            folder = PathText.folder(of: folder)
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
