import Foundation

/// One part of a form as stored by `MultipartFormData`: its header block (without boundaries)
/// and where its body comes from.
struct MultipartPart {
    /// Where a part's body comes from.
    enum Body {
        /// Bytes in memory.
        case data(Data)
        /// A regular file, read when the body is; `size` is what it had when appended.
        case file(path: String, size: Int64)
        /// A caller's stream and the length it was declared to have.
        case stream(MultipartStreamBox, length: Int64)
    }

    /// The header lines and the blank line after them.
    let headers: Data
    /// The body.
    let body: Body

    /// The body's length on the wire, known without reading it.
    var bodyLength: Int64 {
        switch body {
        case .data(let data): return Int64(data.count)
        case .file(_, let size): return size
        case .stream(_, let length): return length
        }
    }
}
