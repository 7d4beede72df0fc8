import Testing
@testable import UVNetworking

/// `EngineShare`: a session-wide total split over the engines of a session's loops.
@Suite(.tags(.unit)) struct EngineShareTests {
    @Test func thePartsAddUpToTheTotalAndDifferByOneAtMost() {
        for count in 1...6 {
            for total in [0, 1, 2, 5, 7, 64, 100, 1_023] {
                let parts = (0..<count).map { EngineShare(index: $0, count: count).of(total) }
                #expect(parts.reduce(0, +) == total, "\(count) engines, \(total)")
                #expect(parts.max()! - parts.min()! <= 1)
                // The first engines take the remainder.
                #expect(parts == parts.sorted(by: >))
            }
        }
    }

    @Test func aSingleEngineTakesEverything() {
        #expect(EngineShare.whole.of(1_000) == 1_000)
        #expect(EngineShare.whole.of(-1) == -1)
        #expect(EngineShare(index: 1, count: 2).of(-1) == -1)
    }
}
