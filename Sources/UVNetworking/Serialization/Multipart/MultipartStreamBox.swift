import Foundation

/// Holds a stream part's InputStream until one reader takes it. A stream can be read only once,
/// so the first reader takes it and later ones find the box empty. Not thread-safe on its own:
/// the owning `MultipartFormData`'s lock guards it.
final class MultipartStreamBox {
    private var stream: InputStream?

    init(_ stream: sending InputStream) { self.stream = stream }

    /// Whether a reader took the stream already.
    var isTaken: Bool { stream == nil }

    /// The stream, once; nil after it was taken.
    func take() -> InputStream? {
        defer { stream = nil }
        return stream
    }
}
