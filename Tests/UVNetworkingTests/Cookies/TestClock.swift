import Foundation
import Synchronization
@testable import UVNetworking

/// A clock tests move by hand, for a `CookieStore`'s expiry and creation times. Counts how
/// often it is read, which is how tests see how many times a store was asked to do something.
final class TestClock: Sendable {
    private let state: Mutex<(now: Date, reads: Int)>

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Mutex((start, 0))
    }

    var now: Date { state.withLock { $0.now } }
    var reads: Int { state.withLock { $0.reads } }

    func advance(_ seconds: TimeInterval) {
        state.withLock { $0.now.addTimeInterval(seconds) }
    }

    /// A store on this clock.
    func store(limits: CookieLimits = .standard) -> CookieStore {
        CookieStore(limits: limits) { [self] in
            state.withLock { state in
                state.reads += 1
                return state.now
            }
        }
    }
}

extension CookieStore {
    /// `set` with string URLs, for tests.
    func set(_ lines: String..., from url: String) {
        setCookies(fromSetCookieHeaders: lines, for: URL(string: url)!)
    }

    /// The Cookie field for a string URL, for tests.
    func header(_ url: String) -> String? {
        cookieHeaderValue(for: URL(string: url)!)
    }
}
