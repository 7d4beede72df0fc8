import Foundation

/// One run of body bytes from a single source, in the order they are sent.
enum MultipartSegment {
    /// Boundaries, header blocks and in-memory bodies.
    case bytes(Data)
    /// A file part's body: `size` bytes expected at `path`.
    case file(path: String, size: Int64)
    /// A stream part's body: exactly `length` bytes expected from `stream`.
    case stream(InputStream, length: Int64)
}

/// How parts and boundaries lay out on the wire (AFNetworking's layout): "--B\r\n" before the
/// first part, "\r\n--B\r\n" between parts, "\r\n--B--\r\n" after the last; no bytes at all for
/// a form without parts.
enum MultipartLayout {
    /// The exact body length.
    static func contentLength(of parts: [MultipartPart], boundary: String) -> Int64 {
        guard !parts.isEmpty else { return 0 }
        let boundaryLength = Int64(boundary.utf8.count)
        var total = Int64(0)
        for (index, part) in parts.enumerated() {
            total += (index == 0 ? boundaryLength + 4 : boundaryLength + 6)
            total += Int64(part.headers.count) + part.bodyLength
        }
        return total + boundaryLength + 8
    }

    /// The segments of the body. Takes every stream part's InputStream out of its box, so the
    /// caller must hold the form's lock; throws when one was already taken.
    static func segments(takingStreamsOf parts: [MultipartPart], boundary: String) throws(NetworkingError) -> [MultipartSegment] {
        guard !parts.isEmpty else { return [] }
        // Check before taking any, so a failed attempt leaves the other streams in place.
        for part in parts {
            if case .stream(let box, _) = part.body, box.isTaken {
                throw .multipart("a multipart InputStream part can be read only once, and this form's body was already read")
            }
        }
        var segments: [MultipartSegment] = []
        segments.reserveCapacity(parts.count * 2 + 1)
        for (index, part) in parts.enumerated() {
            // Boundary and header block in one run: fewer, larger copies.
            var head = Data((index == 0 ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n").utf8)
            head.append(part.headers)
            segments.append(.bytes(head))
            switch part.body {
            case .data(let data):
                if !data.isEmpty { segments.append(.bytes(data)) }
            case .file(let path, let size):
                // Kept even when empty: the reader still checks the file did not grow.
                segments.append(.file(path: path, size: size))
            case .stream(let box, let length):
                guard let stream = box.take() else { preconditionFailure("stream box emptied under the form's lock") }
                segments.append(.stream(stream, length: length))
            }
        }
        segments.append(.bytes(Data("\r\n--\(boundary)--\r\n".utf8)))
        return segments
    }
}
