import Testing
@testable import UVNetworking

/// How a download treats each response head, without a server.
@Suite(.tags(.unit)) struct DownloadResumptionTests {
    typealias Plan = DownloadResumption.Plan

    @Test func aWholeRequestWritesWhateverComes() {
        for status in [200, 206, 404, 416, 500] {
            #expect(DownloadResumption.plan(status: status, contentRange: "bytes 0-9/10", requestedOffset: nil) == .writeFromStart)
        }
    }

    @Test func a206ThatContinuesTheFileIsAppended() {
        #expect(DownloadResumption.plan(status: 206, contentRange: "bytes 100-199/200", requestedOffset: 100)
                == .append(at: 100, totalLength: 200))
        #expect(DownloadResumption.plan(status: 206, contentRange: "bytes 100-199/*", requestedOffset: 100)
                == .append(at: 100, totalLength: nil))
    }

    @Test func a206ElsewhereOrWithoutARangeFails() {
        for range in ["bytes 0-199/200", "bytes 101-199/200", "bytes */200", "items 100-199/200", "garbage"] {
            guard case .fail = DownloadResumption.plan(status: 206, contentRange: range, requestedOffset: 100) else {
                Issue.record("\(range) was accepted")
                continue
            }
        }
        guard case .fail = DownloadResumption.plan(status: 206, contentRange: nil, requestedOffset: 100) else {
            Issue.record("a 206 without Content-Range was accepted")
            return
        }
    }

    /// The resumed request asks for no coding, so the server may pick one: a range of bytes in
    /// another coding than the file's would not continue it, and the body is fetched whole.
    @Test func a206InAnotherCodingThanTheFileRestartsWithoutRange() {
        let range = "bytes 100-199/200"
        #expect(DownloadResumption.plan(status: 206, contentRange: range, requestedOffset: 100, coding: "gzip", fileCoding: nil)
                == .restartWithoutRange)
        #expect(DownloadResumption.plan(status: 206, contentRange: range, requestedOffset: 100, coding: nil, fileCoding: "br")
                == .restartWithoutRange)
        #expect(DownloadResumption.plan(status: 206, contentRange: range, requestedOffset: 100, coding: "gzip, br", fileCoding: "gzip")
                == .restartWithoutRange)
        // The same codings, however written, continue the file.
        #expect(DownloadResumption.plan(status: 206, contentRange: range, requestedOffset: 100, coding: " GZIP ", fileCoding: "gzip")
                == .append(at: 100, totalLength: 200))
        #expect(DownloadResumption.plan(status: 206, contentRange: range, requestedOffset: 100, coding: "identity", fileCoding: nil)
                == .append(at: 100, totalLength: 200))
    }

    @Test func a200RestartsTheFile() {
        #expect(DownloadResumption.plan(status: 200, contentRange: nil, requestedOffset: 100) == .writeFromStart)
        #expect(DownloadResumption.plan(status: 404, contentRange: nil, requestedOffset: 100) == .writeFromStart)
    }

    @Test func a416MatchingTheFileMeansItIsComplete() {
        #expect(DownloadResumption.plan(status: 416, contentRange: "bytes */100", requestedOffset: 100) == .alreadyComplete(length: 100))
    }

    @Test func anyOther416RestartsWithoutRange() {
        for range in ["bytes */99", "bytes */101", "bytes 0-9/100", "nonsense", nil] as [String?] {
            #expect(DownloadResumption.plan(status: 416, contentRange: range, requestedOffset: 100) == .restartWithoutRange,
                    "\(range ?? "none")")
        }
    }

    @Test func contentRangeParsing() {
        #expect(DownloadResumption.parse("bytes 0-0/1") == .range(first: 0, last: 0, complete: 1))
        #expect(DownloadResumption.parse("  BYTES 5-9/*  ") == .range(first: 5, last: 9, complete: nil))
        #expect(DownloadResumption.parse("bytes */0") == .unsatisfied(complete: 0))
        #expect(DownloadResumption.parse("bytes 9-5/10") == nil)
        #expect(DownloadResumption.parse("bytes 5-10/10") == nil)
        #expect(DownloadResumption.parse("bytes */*") == nil)
        #expect(DownloadResumption.parse("bytes -5-9/10") == nil)
        #expect(DownloadResumption.parse("bytes 5-+9/10") == nil)
        #expect(DownloadResumption.parse("bytes 5-9") == nil)
    }
}
