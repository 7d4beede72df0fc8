/// A stream's receive window, grown while its consumer keeps up. It starts small, so that a
/// hundred streams whose consumers stall hold little, and doubles each time the consumer has
/// taken a whole window's worth without stopping: then the window, not the consumer, bounds the
/// stream's rate, and a fast consumer on a long path reaches full speed within a few windows.
/// curl's figures: 64 KiB to begin with, 10 MiB at most. A consumer that stops (the task paused
/// reading: a slow disk, a body nobody iterates) starts the count again, so a stalled stream's
/// window never grows; what it may still receive is one window. Sans-I/O: the stream asks, and
/// applies what it answers.
struct HTTP2StreamWindow: Equatable {
    /// The window every stream starts with (the SETTINGS_INITIAL_WINDOW_SIZE we announce).
    static let initial: Int32 = 64 << 10
    /// The largest a stream's window grows.
    static let maximum: Int32 = 10 << 20

    private(set) var size: Int32
    private var takenSinceGrowth = 0

    init(size: Int32 = HTTP2StreamWindow.initial) {
        self.size = size
    }

    /// The consumer took `count` bytes as they came. Returns the new size when the window
    /// should grow, nil otherwise.
    mutating func taken(_ count: Int) -> Int32? {
        guard size < Self.maximum else { return nil }
        takenSinceGrowth += count
        guard takenSinceGrowth >= Int(size) else { return nil }
        takenSinceGrowth = 0
        size = size > Self.maximum / 2 ? Self.maximum : size * 2
        return size
    }

    /// The consumer stopped taking bytes: growth counts again from its next byte.
    mutating func consumerStopped() {
        takenSinceGrowth = 0
    }
}
