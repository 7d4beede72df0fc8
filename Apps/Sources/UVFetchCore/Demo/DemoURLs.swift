import Foundation

/// The demo's input: `http://127.0.0.1:PORT/items/0` up to `/items/(count-1)`, made one at a time
/// as the runner pulls them, so a run of any length holds only the URLs in flight.
public struct DemoURLs: Sequence, Sendable {
    /// The server's port.
    public let port: Int
    /// How many URLs.
    public let count: Int

    /// The `count` item URLs on 127.0.0.1:`port`.
    public init(port: Int, count: Int) {
        self.port = port
        self.count = count
    }

    /// The URL of item `item`.
    public func url(ofItem item: Int) -> URL {
        URL(string: "http://127.0.0.1:\(port)/items/\(item)")!
    }

    /// A fresh pass from item 0.
    public func makeIterator() -> Iterator {
        Iterator(urls: self)
    }

    /// Counts up from item 0 to `count - 1`.
    public struct Iterator: IteratorProtocol {
        private let urls: DemoURLs
        private var item = 0

        init(urls: DemoURLs) { self.urls = urls }

        /// The next item's URL; nil after the last.
        public mutating func next() -> URLInput.Entry? {
            guard item < urls.count else { return nil }
            defer { item += 1 }
            return .url(urls.url(ofItem: item))
        }
    }
}
