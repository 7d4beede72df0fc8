import Foundation

/// An optional date in 8 bytes instead of `Date?`'s 16 (nil is NaN): a connection keeps six of
/// them for its metrics for as long as it lives, idle or not.
@propertyWrapper
struct CompactDate {
    private var seconds: Double

    init(wrappedValue: Date?) {
        seconds = wrappedValue?.timeIntervalSinceReferenceDate ?? .nan
    }

    var wrappedValue: Date? {
        get { seconds.isNaN ? nil : Date(timeIntervalSinceReferenceDate: seconds) }
        set { seconds = newValue?.timeIntervalSinceReferenceDate ?? .nan }
    }
}
