#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// `--out-dir`: where fetched bodies are kept, one file per URL, named after the URL's last path
/// segment as `curl -O` and wget name them, with wget's `.1`, `.2` … when a name is taken.
///
/// No existing file is ever replaced: two URLs ending in the same name, a file already in the
/// directory, or one another process writes there meanwhile, give the later body the next free
/// suffix.
public final class OutputDirectory: Sendable {
    /// The directory.
    public let url: URL
    /// The next suffix to try for names that were already taken once. Only names that collided
    /// are remembered, so a run of distinct names costs no memory here.
    private let nextSuffix = Mutex([String: Int]())
    /// The mode kept files get: what a new file gets under the process's umask (a download's
    /// temporary file is private, 0600, and a kept body should look like any file the user
    /// made).
    private let fileMode: mode_t

    /// Longest name kept from a URL, in bytes: room for a suffix within NAME_MAX (255).
    static let maximumNameBytes = 240

    /// Uses `path`, creating it (and its parents) when missing.
    /// - Throws: `FetchInputError.unwritable` when it cannot be created or is not a directory.
    public init(path: String) throws(FetchInputError) {
        var isDirectory: ObjCBool = false
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: path)
        }
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
              access(path, W_OK | X_OK) == 0
        else { throw .unwritable(path: path) }
        url = URL(fileURLWithPath: path, isDirectory: true)
        fileMode = 0o666 & ~Self.processUmask()
    }

    /// The umask, read from /proc rather than with umask(2), which can only be read by setting
    /// it and would race with other threads creating files.
    private static func processUmask() -> mode_t {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
        return line.flatMap { mode_t($0.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022
    }

    /// The file name a URL's body gets before any suffix: its last path segment, or
    /// `index.html` for a path that ends in `/` (as wget names it). The query is not part of it.
    /// Bytes a file name cannot hold, or should not (control characters), become `_`, and so do
    /// `.` and `..`.
    public static func fileName(for url: URL) -> String {
        let path = url.path(percentEncoded: false)  // keeps the trailing slash `.path` drops
        let segment = path.hasSuffix("/") || path.isEmpty ? "" : String(path[(path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex)...])
        if segment.isEmpty { return "index.html" }
        if segment == "." || segment == ".." { return "_" }
        var name = String(String.UnicodeScalarView(segment.unicodeScalars.map { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F || scalar == "/" ? "_" : scalar
        }))
        // Cut at a character boundary so the name stays valid UTF-8.
        while name.utf8.count > maximumNameBytes { name.removeLast() }
        return name
    }

    /// Gives `temporaryFile` (a finished download) `url`'s name in the directory, or the first
    /// free suffixed one, and returns where it went; the temporary file is gone afterwards.
    ///
    /// Each name is claimed atomically: a hard link to the new name, which fails rather than
    /// replace anything there, even what another process made a moment ago (a check then a
    /// rename would replace it). A taken name of any kind, a dangling symlink included, moves on
    /// to the next suffix and is left as it is. Where the temporary file cannot be linked from
    /// (another file system, or one without hard links), the body is copied into a file created
    /// with O_EXCL at the name, which claims it just as atomically.
    /// - Throws: `POSIXError` when the body cannot be linked or copied for a reason other than
    ///   a taken name.
    public func keep(_ temporaryFile: URL, for url: URL) throws -> URL {
        let name = Self.fileName(for: url)
        var suffix = nextSuffix.withLock { $0[name] } ?? 0
        // Before the name exists, so the kept file never shows with the private mode.
        chmod(temporaryFile.path, fileMode)
        var copies = false
        while true {
            let candidate = self.url.appendingPathComponent(suffix == 0 ? name : "\(name).\(suffix)")
            let claimed = copies ? try Self.copy(temporaryFile.path, toNew: candidate.path)
                                 : try Self.link(temporaryFile.path, toNew: candidate.path)
            switch claimed {
            case .claimed:
                unlink(temporaryFile.path)
                if suffix > 0 { nextSuffix.withLock { $0[name] = suffix + 1 } }
                return candidate
            case .taken:
                suffix += 1
            case .cannotLink:
                copies = true
            }
        }
    }

    /// What an attempt to claim a name did.
    private enum Claim {
        /// The body has the name.
        case claimed
        /// Something already has the name.
        case taken
        /// Hard links cannot be made from the body's file to the directory.
        case cannotLink
    }

    private static func link(_ source: String, toNew path: String) throws -> Claim {
        if Glibc.link(source, path) == 0 { return .claimed }
        switch errno {
        case EEXIST: return .taken
        // Another file system; one without hard links; the link count at its limit.
        case EXDEV, EPERM, EOPNOTSUPP, EMLINK: return .cannotLink
        case let code: throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    /// Copies `source` into a new file at `path` (mode 0666 under the umask, as any new file),
    /// which must not exist: `.taken` when anything is there.
    private static func copy(_ source: String, toNew path: String) throws -> Claim {
        let output = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard output >= 0 else {
            if errno == EEXIST { return .taken }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        var failure = input < 0 ? errno : 0
        if input >= 0 {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 1)
            defer { buffer.deallocate() }
            copying: while true {
                let count = read(input, buffer, 1 << 20)
                if count == 0 { break }
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                var written = 0
                while written < count {
                    let result = write(output, buffer + written, count - written)
                    if result < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        break copying
                    }
                    written += result
                }
            }
            close(input)
        }
        if close(output) != 0 && failure == 0 { failure = errno }
        guard failure == 0 else {
            // Ours, made above: a partial copy must not keep the name.
            unlink(path)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        return .claimed
    }
}
