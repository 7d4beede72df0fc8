/// Payloads archived outside a `WARCWriter` that `--warc-dedup` counts as archived: a fleet of
/// workers (`uvfetch worker`) shares the originals each one wrote, so that a payload one of them
/// archived is a revisit in the others' files.
///
/// The writer calls both methods from the run's completion queue, under its own lock: they
/// must answer from memory at once, never wait for a database.
public protocol PayloadIndex: Sendable {
    /// The original of the payload whose `WARC-Payload-Digest` is `digest`, if one was archived
    /// elsewhere; asked only for a payload the writer has not archived itself.
    func original(ofPayload digest: String) -> ArchivedPayload?

    /// The originals the writer archived, in the order written, once the records that go with
    /// them are out (`WARCWriter.commit(_:)`): never one a roll back could still take back.
    func archived(_ payloads: [ArchivedPayload])
}
