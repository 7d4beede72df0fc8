#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// `--out-dir`: where fetched bodies are kept, one file per URL, named after the URL's last path
/// segment as `curl -O` and wget name them, with wget's `.1`, `.2` … when a name is taken.
///
/// No existing file is ever replaced: two URLs ending in the same name, or a file already in the
/// directory, give the later body the next free suffix.
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

    /// Moves `temporaryFile` (a finished download) into the directory under `url`'s name, or the
    /// first free suffixed one, and returns where it went.
    /// - Throws: the move's error when it fails for a reason other than a taken name.
    public func keep(_ temporaryFile: URL, for url: URL) throws -> URL {
        let name = Self.fileName(for: url)
        var suffix = nextSuffix.withLock { $0[name] } ?? 0
        while true {
            let candidate = self.url.appendingPathComponent(suffix == 0 ? name : "\(name).\(suffix)")
            do {
                // Refuses an existing destination: the check and the refusal make a taken name
                // move on to the next suffix even if another process wrote it meanwhile.
                try FileManager.default.moveItem(at: temporaryFile, to: candidate)
                chmod(candidate.path, fileMode)
                if suffix > 0 { nextSuffix.withLock { $0[name] = suffix + 1 } }
                return candidate
            } catch where FileManager.default.fileExists(atPath: candidate.path) {
                suffix += 1
            }
        }
    }
}
