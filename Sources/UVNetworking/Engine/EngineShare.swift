/// Which of a session's engines this is, out of how many (one per loop of its group): the seam
/// for limits that hold for the session as a whole, such as a connection budget, which each
/// engine enforces on its own loop for its share (`of(_:)`), so that the shares add up to the
/// total without any engine asking another.
struct EngineShare: Sendable, Equatable {
    /// The engine's loop's position in the group.
    let index: Int
    /// The number of engines (loops) of the session.
    let count: Int

    /// The only engine of a single-loop session.
    static let whole = EngineShare(index: 0, count: 1)

    /// This engine's part of `total`: the total divided evenly, the first engines taking one
    /// more each until the remainder is spent, so the parts add up to `total` exactly. A part is
    /// never below one when `total` is at least the number of engines; below that, engines past
    /// the total get zero (callers that need one at least say so).
    func of(_ total: Int) -> Int {
        guard count > 1 else { return total }
        guard total > 0 else { return total }
        return total / count + (index < total % count ? 1 : 0)
    }
}
