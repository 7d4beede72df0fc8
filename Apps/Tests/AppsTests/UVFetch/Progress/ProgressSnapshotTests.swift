import Testing
@testable import UVFetchCore

/// `ProgressSnapshot`: the progress line's wording, rate and ETA, without a terminal.
@Suite(.tags(.unit)) struct ProgressSnapshotTests {
    @Test func showsDoneOfTotalRateErrorsAndETA() {
        let snapshot = ProgressSnapshot(done: 41_200, errors: 3, total: 100_000, elapsed: 2)
        #expect(snapshot.rate == 20_600)
        // 58,800 left at 20,600/s: 2.85 s, shown rounded up.
        #expect(snapshot.line() == "41,200/100,000 done  20,600/s  3 errors  ETA 0:03")
    }

    @Test func withoutATotalThereIsNoETA() {
        let snapshot = ProgressSnapshot(done: 1, errors: 1, total: nil, elapsed: 0.5)
        #expect(snapshot.secondsLeft == nil)
        #expect(snapshot.line() == "1 done  2/s  1 error")
    }

    @Test func beforeAnythingFinishedThereIsNoRateToProjectFrom() {
        let snapshot = ProgressSnapshot(done: 0, errors: 0, total: 10, elapsed: 0)
        #expect(snapshot.rate == 0)
        #expect(snapshot.line() == "0/10 done  0/s  0 errors")
    }

    @Test func longRunsShowHours() {
        let snapshot = ProgressSnapshot(done: 1_000, errors: 0, total: 10_000_000, elapsed: 1)
        #expect(snapshot.line().hasSuffix("ETA 2:46:39"))
    }

    @Test func isCutToTheTerminalWidth() {
        let snapshot = ProgressSnapshot(done: 41_200, errors: 3, total: 100_000, elapsed: 2)
        #expect(snapshot.line(width: 20) == "41,200/100,000 done ")
        #expect(snapshot.line(width: 0) == "")
    }

    @Test func saysNetworkUnreachableInPlaceOfTheRateAndETA() {
        let snapshot = ProgressSnapshot(done: 41_200, errors: 3, total: 100_000, elapsed: 2, isNetworkUnreachable: true)
        #expect(snapshot.line() == "41,200/100,000 done  network unreachable  3 errors")
        // The figures stay what they are; only the line leaves them out.
        #expect(snapshot.rate == 20_600)
    }

    @Test func unreachableWithoutATotalOrBeforeAnythingFinished() {
        #expect(ProgressSnapshot(done: 1, errors: 1, total: nil, elapsed: 0.5, isNetworkUnreachable: true).line()
                == "1 done  network unreachable  1 error")
        #expect(ProgressSnapshot(done: 0, errors: 0, total: 10, elapsed: 0, isNetworkUnreachable: true).line()
                == "0/10 done  network unreachable  0 errors")
    }

    @Test func theRateAndETAComeBackWithTheNetwork() {
        var snapshot = ProgressSnapshot(done: 41_200, errors: 3, total: 100_000, elapsed: 2, isNetworkUnreachable: true)
        snapshot.isNetworkUnreachable = false
        #expect(snapshot.line() == "41,200/100,000 done  20,600/s  3 errors  ETA 0:03")
        #expect(ProgressSnapshot(done: 41_200, errors: 3, total: 100_000, elapsed: 2) == snapshot, "reachable by default")
    }

    @Test func anUnreachableLineIsCutToTheTerminalWidthToo() {
        let snapshot = ProgressSnapshot(done: 41_200, errors: 3, total: 100_000, elapsed: 2, isNetworkUnreachable: true)
        #expect(snapshot.line(width: 29) == "41,200/100,000 done  network ")
    }

    @Test func groupsDigitsInThousands() {
        #expect(ProgressSnapshot.grouped(0) == "0")
        #expect(ProgressSnapshot.grouped(999) == "999")
        #expect(ProgressSnapshot.grouped(1_000) == "1,000")
        #expect(ProgressSnapshot.grouped(10_000_000) == "10,000,000")
        #expect(ProgressSnapshot.grouped(-12_345) == "-12,345")
    }
}
