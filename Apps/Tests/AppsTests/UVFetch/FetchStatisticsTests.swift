import Foundation
import Testing
import UVFetchCore

/// `FetchStatistics`: counts, classes, percentiles, the summary's first line and the exit status.
@Suite(.tags(.unit)) struct FetchStatisticsTests {
    private func record(status: Int?, milliseconds: Double, error: FetchRecord.Failure? = nil) -> FetchRecord {
        FetchRecord(url: "http://x.example/", status: status, bytes: 10, timings: .init(total: milliseconds),
                    error: error, attempts: 1)
    }

    @Test func allSuccessfulExitsZero() {
        var statistics = FetchStatistics()
        for index in 1...100 { statistics.add(record(status: 200, milliseconds: Double(index))) }
        #expect(statistics.exitStatus == ExitStatus.success)
        #expect(abs(statistics.latency(atPercentile: 50) - 50) < 0.1)
        #expect(abs(statistics.latency(atPercentile: 90) - 90) < 0.1)
        #expect(abs(statistics.maximumLatency - 100) < 0.1)
        let summary = statistics.summary(seconds: 2)
        #expect(summary.hasPrefix("100 requests in 2.00 s: 100 succeeded, 0 failed, 1000 body bytes, 50 requests/s, 0.0 MB/s\n"))
        #expect(summary.contains("status: 2xx 100"))
        // HdrHistogram keeps 3 significant digits, so 50 ms reads back as 50.0x.
        #expect(summary.contains("latency ms: p50 50.0"))
        #expect(summary.contains(" p90 90.0"))
        #expect(summary.contains(" p99 99.0"))
        #expect(summary.contains(" max 100.0"))
    }

    /// URLs `--resume` skipped are neither requests nor failures: a line of their own.
    @Test func skippedURLsAreCountedApart() {
        var statistics = FetchStatistics()
        statistics.add(record(status: 200, milliseconds: 1))
        for _ in 0..<3 { statistics.addAlreadyRecorded() }
        #expect(statistics.alreadyRecorded == 3 && statistics.total == 1)
        #expect(statistics.exitStatus == ExitStatus.success)
        let summary = statistics.summary(seconds: 1)
        #expect(summary.hasPrefix("1 requests in 1.00 s: 1 succeeded, 0 failed"))
        #expect(summary.contains("\nskipped, already recorded: 3\n"))
        #expect(!FetchStatistics().summary(seconds: 1).contains("skipped"))
    }

    @Test func throughputIsInMegabytesPerSecond() {
        var statistics = FetchStatistics()
        for _ in 0..<3 {
            statistics.add(FetchRecord(url: "http://x.example/", status: 200, bytes: 1_000_000, timings: .init(total: 1), error: nil, attempts: 1))
        }
        #expect(statistics.summary(seconds: 2).hasPrefix("3 requests in 2.00 s: 3 succeeded, 0 failed, 3000000 body bytes, 2 requests/s, 1.5 MB/s\n"))
    }

    @Test func failuresAreCountedByClassAndKind() {
        var statistics = FetchStatistics()
        statistics.add(record(status: 200, milliseconds: 1))
        statistics.add(record(status: 404, milliseconds: 1,
                              error: .init(code: "unacceptableStatusCode", message: "404", kind: "validation")))
        statistics.add(record(status: nil, milliseconds: 1,
                              error: .init(code: "connectionRefused", message: "refused", kind: "transport")))
        #expect(statistics.failed == 2)
        #expect(statistics.statusClasses == ["2xx": 1, "4xx": 1, "none": 1])
        #expect(statistics.errorKinds == ["validation": 1, "transport": 1])
        #expect(statistics.exitStatus == ExitStatus.someFailed)
        #expect(statistics.summary(seconds: 1).contains("errors: transport 1, validation 1"))
    }

    @Test func aMalformedLineAloneFailsTheRun() {
        var statistics = FetchStatistics()
        statistics.add(record(status: 204, milliseconds: 1))
        statistics.addMalformed()
        #expect(statistics.exitStatus == ExitStatus.someFailed)
    }
}
