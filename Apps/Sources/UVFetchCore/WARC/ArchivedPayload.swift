/// A payload archived as an original `response` record, which later responses with the same
/// payload refer to as `revisit` records (`--warc-dedup`, `PayloadIndex`).
public struct ArchivedPayload: Sendable, Equatable {
    /// The record's `WARC-Payload-Digest` (`sha1:` and base32).
    public var digest: String
    /// Its `WARC-Record-ID` (`<urn:uuid:...>`): a revisit's `WARC-Refers-To`.
    public var recordID: String
    /// Its `WARC-Target-URI`: a revisit's `WARC-Refers-To-Target-URI`.
    public var targetURI: String
    /// Its `WARC-Date`, as written: a revisit's `WARC-Refers-To-Date`.
    public var date: String

    /// A payload `digest` archived by the record `recordID` of `targetURI` at `date`.
    public init(digest: String, recordID: String, targetURI: String, date: String) {
        self.digest = digest
        self.recordID = recordID
        self.targetURI = targetURI
        self.date = date
    }

    init(digest: String, original: WARCExchangeRecords.Original) {
        self.init(digest: digest, recordID: original.id, targetURI: original.targetURI, date: original.date)
    }

    /// What a revisit of it names.
    var original: WARCExchangeRecords.Original { .init(id: recordID, targetURI: targetURI, date: date) }
}
