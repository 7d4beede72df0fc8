#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The names of the files a `--warc FILE` run writes.
///
/// Without a maximum size, one file: FILE as given. With one, a numbered series: a five-digit
/// serial from 00000 goes before FILE's `.warc.gz` (or `.warc`) ending, or after its name
/// when it has neither: `crawl.warc.gz` gives `crawl-00000.warc.gz`, `crawl-00001.warc.gz`, ...;
/// `crawl` gives `crawl-00000`, ...
public struct WARCFileNaming: Sendable, Equatable {
    /// FILE as given.
    public let path: String
    /// Whether files rotate (a maximum size was given).
    public let isNumbered: Bool

    /// The naming for `path`, numbered or not.
    public init(path: String, isNumbered: Bool) {
        self.path = path
        self.isNumbered = isNumbered
    }

    /// The name of file number `serial` (0 first).
    public func name(serial: Int) -> String {
        guard isNumbered else { return path }
        let (stem, ending) = parts
        let number = String(serial)
        return stem + "-" + String(repeating: "0", count: max(0, 5 - number.count)) + number + ending
    }

    /// The serials of the series' files that exist now, in order: what an earlier run wrote
    /// (a run that continues goes on after the highest; a new run must not write over them).
    /// Only names this naming gives: five digits or more, as a serial past 99999 has.
    public func existingSerials() -> [Int] {
        guard isNumbered else { return [] }
        let (stem, ending) = parts
        let directory = (stem as NSString).deletingLastPathComponent
        let prefix = (stem as NSString).lastPathComponent + "-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return [] }
        return names.compactMap { name -> Int? in
            guard name.hasPrefix(prefix), name.hasSuffix(ending), name.count > prefix.count + ending.count else { return nil }
            let digits = name.dropFirst(prefix.count).dropLast(ending.count)
            guard digits.count >= 5, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            // Only the spelling `name(serial:)` gives: "000001" is not file 1.
            guard let serial = Int(digits), (self.name(serial: serial) as NSString).lastPathComponent == name else { return nil }
            return serial
        }.sorted()
    }

    /// FILE split where the serial goes: before a `.warc.gz` or `.warc` ending, else at the end.
    private var parts: (stem: String, ending: String) {
        for ending in [".warc.gz", ".warc"] where path.hasSuffix(ending) && path.count > ending.count {
            return (String(path.dropLast(ending.count)), ending)
        }
        return (path, "")
    }
}
