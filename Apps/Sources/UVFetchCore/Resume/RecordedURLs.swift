/// The URLs a `--resume` run does not fetch: those its `--jsonl` file already has a record for,
/// and then each URL as the run takes it, so a URL the list gives twice is fetched once.
///
/// A URL is its input bytes (the line trimmed of the spaces and tabs around it, or the
/// argument), exactly as a record keeps them: `FetchRecord.urlBase64` when the line is not
/// UTF-8, `FetchRecord.url` otherwise. Only a key per URL is held (`RecordedURLKey`, 16 bytes,
/// about 40 at the peak with the set's spare room), never the URLs, so a file of millions of
/// records fits.
///
/// A class, used by one thread at a time (the one reading the input): a value shared between
/// two owners would copy the whole set at its first insertion.
public final class RecordedURLs {
    private var keys = Set<RecordedURLKey>()

    /// An empty set.
    public init() {}

    /// URLs held.
    public var count: Int { keys.count }

    /// Adds the URL of an input entry (`URLInput.Entry.url`'s `text` and `bytes`), or of a
    /// record (its `url`, and `urlBase64` decoded); false when it was there already, so the
    /// entry is to be skipped.
    @discardableResult
    public func insert(text: String, bytes: [UInt8]?) -> Bool {
        keys.insert(bytes.map(RecordedURLKey.init(bytes:)) ?? RecordedURLKey(text: text)).inserted
    }

    /// Adds a key made already (a record's, read by `RecordFileScan`).
    func insert(_ key: RecordedURLKey) {
        keys.insert(key)
    }

    /// Whether the URL of an input entry is held.
    public func contains(text: String, bytes: [UInt8]?) -> Bool {
        keys.contains(bytes.map(RecordedURLKey.init(bytes:)) ?? RecordedURLKey(text: text))
    }
}
