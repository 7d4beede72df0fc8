/// What a download task does with a response head: a pure function of the status, the
/// Content-Range and the offset its request asked from, so every rule is tested without a
/// server.
///
/// A request without a range writes whatever body comes, from byte 0 (a 404's page too, as
/// URLSession does: check the status). A resumed request (`Range: bytes=N-`, `If-Range`):
/// - 206 whose Content-Range starts at N: append the body to the partial file;
/// - 206 starting elsewhere: fail, the bytes would not continue the file;
/// - 206 in another content coding than the file's bytes (the resumed request asks for no
///   coding, so a server may pick one): a range of other bytes; send the request again without
///   Range, as for a 416 that does not match;
/// - 416 with `Content-Range: bytes */N`: the file already holds every byte, so it is the
///   result and this response's body is dropped;
/// - 416 otherwise (another length, none, unparsable): the partial file does not match the
///   resource; drop this response and send the request again without Range, so the body is
///   fetched whole (one restart at most, since the new request asks for no range);
/// - anything else, 200 above all (the validator no longer matched, or the server ignores
///   ranges): the body is the whole resource, written from byte 0 over the partial file.
enum DownloadResumption {
    enum Plan: Equatable, Sendable {
        /// Write the body from the file's first byte.
        case writeFromStart
        /// Keep the file's first `offset` bytes and append the body; `totalLength` is the
        /// resource's full size when the server said it.
        case append(at: Int64, totalLength: Int64?)
        /// The file is complete (`length` bytes): drop the body.
        case alreadyComplete(length: Int64)
        /// Drop the body; send the request again without Range.
        case restartWithoutRange
        /// The response cannot continue the file.
        case fail(String)
    }

    /// A parsed `Content-Range` (RFC 9110 §14.4) of a single byte range.
    enum ContentRange: Equatable, Sendable {
        /// `bytes first-last/complete`, `complete` nil for `*`.
        case range(first: Int64, last: Int64, complete: Int64?)
        /// `bytes */complete`, sent with 416.
        case unsatisfied(complete: Int64)
    }

    /// The plan for a response with `status`, `contentRange` and Content-Encoding `coding`, to
    /// a request that asked from `requestedOffset` to continue a file whose bytes are in
    /// `fileCoding` (nil: none).
    static func plan(status: Int, contentRange: String?, requestedOffset: Int64?,
                     coding: String? = nil, fileCoding: String? = nil) -> Plan {
        guard let offset = requestedOffset else { return .writeFromStart }
        switch status {
        case 206:
            guard normalizedCoding(coding) == normalizedCoding(fileCoding) else { return .restartWithoutRange }
            guard let contentRange, case .range(let first, _, let complete)? = parse(contentRange) else {
                return .fail("a 206 response to a resumed download has no usable Content-Range (\(contentRange ?? "none"))")
            }
            guard first == offset else {
                return .fail("the server's Content-Range \(contentRange) does not continue the partial file at byte \(offset)")
            }
            return .append(at: offset, totalLength: complete)
        case 416:
            if let contentRange, case .unsatisfied(let complete)? = parse(contentRange), complete == offset {
                return .alreadyComplete(length: complete)
            }
            return .restartWithoutRange
        default:
            return .writeFromStart
        }
    }

    /// A Content-Encoding value compared by its codings: lowercased, without spaces, nil for
    /// none or only `identity`.
    static func normalizedCoding(_ value: String?) -> String? {
        guard let value else { return nil }
        let codings = value.lowercased().split(separator: ",")
            .map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty && $0 != "identity" }
        return codings.isEmpty ? nil : codings.joined(separator: ",")
    }

    /// Parses `bytes a-b/c`, `bytes a-b/*` and `bytes */c`; nil for anything else (other units,
    /// last before first, a length that the range does not fit).
    static func parse(_ value: String) -> ContentRange? {
        let trimmed = value.trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count).trimmingWhitespace()
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let completeText = parts[1]
        let complete: Int64?
        if completeText == "*" {
            complete = nil
        } else {
            guard let value = digits(completeText) else { return nil }
            complete = value
        }
        if parts[0] == "*" {
            guard let complete else { return nil }
            return .unsatisfied(complete: complete)
        }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = digits(bounds[0]), let last = digits(bounds[1]), first <= last else { return nil }
        if let complete, last >= complete { return nil }
        return .range(first: first, last: last, complete: complete)
    }

    /// A non-negative decimal made of digits only.
    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }
}

extension StringProtocol {
    /// Drops leading and trailing spaces and tabs.
    fileprivate func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return String(self[start...end])
    }
}
