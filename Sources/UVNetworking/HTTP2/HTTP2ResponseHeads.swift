import Glibc
import UVHTTP1

/// Makes the response heads of one HTTP/2 connection, reusing heads the tasks are done with.
///
/// A server sends the same head response after response, its Date value aside. The first head
/// becomes the template: later heads with the same status and bytes (Date's value aside) name
/// it, share its swift-http-types response (`ResponseHead.httpResponse`) and its field layout,
/// as over HTTP/1.1 (`HeadReplay`). Such a head is not built anew either: the connection keeps
/// the heads it handed out, and one whose task has let go of it (the connection's reference is
/// then the only one) gets the new Date value written over its own and is handed out again. A
/// new head costs two allocations and, since tasks complete on another thread, two frees there
/// that go back to the loop thread's malloc arena under the lock the loop takes too.
///
/// Unlike HTTP/1.1, where a connection's next head comes after its task is done, the streams of
/// a connection are answered while the earlier ones' completions are still queued: the head
/// handed out last is nearly always still held. So the heads are kept in a ring that grows
/// until the slot looked at next is usually free again, up to twice the streams running (and at
/// most `maximumKept`): a connection that runs one stream at a time keeps a few heads, however
/// often a completion happens to lag behind the next response.
///
/// Loop-confined.
final class HTTP2ResponseHeads {
    /// The last final head that matched no template (nil at first).
    @exclusivity(unchecked) private(set) var template: ResponseHead?
    /// Heads handed out that name `template`, to reuse once nothing else holds them.
    @exclusivity(unchecked) private var kept: [ResponseHead] = []
    /// The slot in `kept` looked at next.
    @exclusivity(unchecked) private var next = 0
    /// At most this many heads are kept (a busy connection's worth; about 350 bytes each for
    /// a dozen fields). Given back when the connection idles (`trim`).
    static let maximumKept = 128

    /// Heads kept for reuse (tests).
    var keptCount: Int { kept.count }

    /// The head of a final response with `status` whose fields are `block`'s, on a connection
    /// running `streams` streams.
    func head(status: Int, block: HTTP2HeaderBlock, streams: Int) -> ResponseHead {
        let dateIndex = block.known.date
        guard let template, template.status == status, Self.block(block, repeats: template, dateIndex: dateIndex) else {
            let head = ResponseHead(versionMajor: 2, versionMinor: 0, status: status, reason: "", headers: block.receivedFields,
                                    keepAlive: true)
            template = head
            // The kept heads name the old template: none can be reused for the new one.
            kept.removeAll()
            next = 0
            return head
        }
        if next < kept.count && isKnownUniquelyReferenced(&kept[next]) {
            let head = kept[next]
            next = next + 1 == kept.count ? 0 : next + 1
            if dateIndex >= 0 {
                let date = block.bounds[dateIndex]
                head.reuse(dateValue: Int(date.valueStart)..<Int(date.valueEnd), with: block.bytes.baseAddress! + Int(date.valueStart),
                           keepAlive: true)
            }
            return head
        }
        let head = ResponseHead(versionMajor: 2, versionMinor: 0, status: status, reason: "", headers: block.receivedFields,
                                keepAlive: true, template: template, dateIndex: dateIndex)
        if kept.count < min(Self.maximumKept, 2 * streams + 2) {
            // The slot looked at is still held: one more slot, and the same one looked at next.
            kept.append(head)
        } else {
            kept[next] = head
            next = next + 1 == kept.count ? 0 : next + 1
        }
        return head
    }

    /// Lets go of the kept heads (the connection idles); the template stays.
    func trim() {
        kept = []
        next = 0
    }

    /// Whether `block`'s fields equal `template`'s byte for byte, bounds included, except inside
    /// the value of the field at `dateIndex` (-1: none), which lies at the same place: then the
    /// block is `template`'s head with another Date.
    static func block(_ block: HTTP2HeaderBlock, repeats template: ResponseHead, dateIndex: Int) -> Bool {
        let fields = template.headers
        let bytes = block.bytes
        guard fields.count == block.count, fields.sectionByteCount == bytes.count else { return false }
        // No field: nothing more to compare (and the template's storage may have no bytes at all).
        guard fields.count > 0 else { return true }
        return fields.storage.withUnsafeBytes { stored in
            let ours = stored.baseAddress!
            let bounds = UnsafeRawBufferPointer(block.bounds)
            let boundsEqual = memcmp(ours + fields.boundsOffset, bounds.baseAddress!, bounds.count) == 0
            guard boundsEqual, let incoming = bytes.baseAddress else { return boundsEqual }
            guard dateIndex >= 0 else { return memcmp(ours, incoming, bytes.count) == 0 }
            let date = block.bounds[dateIndex]
            let start = Int(date.valueStart)
            let end = Int(date.valueEnd)
            return memcmp(ours, incoming, start) == 0 && memcmp(ours + end, incoming + end, bytes.count - end) == 0
        }
    }
}
