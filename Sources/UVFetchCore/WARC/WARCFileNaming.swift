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
        let number = String(serial)
        let padded = String(repeating: "0", count: max(0, 5 - number.count)) + number
        for ending in [".warc.gz", ".warc"] where path.hasSuffix(ending) && path.count > ending.count {
            return String(path.dropLast(ending.count)) + "-" + padded + ending
        }
        return path + "-" + padded
    }
}
