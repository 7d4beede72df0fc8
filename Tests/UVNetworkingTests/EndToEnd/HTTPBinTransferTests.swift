import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// httpbin's byte endpoints through data and download tasks over each protocol: fixed,
    /// streamed (chunked over HTTP/1.1, DATA frames without a length over HTTP/2) and ranged
    /// bodies, and a download resumed against /range's ETag.
    @Suite(.tags(.nginx)) struct HTTPBinTransferTests {
        @Test(arguments: Wire.allCases) func bytesAndStreamBytesArriveWhole(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let fixed = harness.fetch(base + "/bytes/5000?seed=7")
            #expect(fixed.data?.count == 5000)
            wire.expectSpoken(fixed)
            // No Content-Length: chunked over HTTP/1.1 (HTTP/2 has no transfer coding).
            let streamed = harness.fetch(base + "/stream-bytes/50000?chunk_size=1000&seed=7")
            #expect(streamed.status == 200)
            #expect(streamed.data?.count == 50_000)
            #expect(streamed.response?.headerFields[.contentLength] == nil)
            #expect(streamed.response?.headerFields[.transferEncoding] == (wire == .http1_1 ? "chunked" : nil))
        }

        @Test(arguments: Wire.allCases) func rangeHeaderGetsAPartialResponse(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let partial = harness.fetch(base + "/range/100", fields: [("Range", "bytes=10-19")])
            wire.expectSpoken(partial)
            #expect(partial.status == 206)
            #expect(partial.text == "klmnopqrst")
            #expect(partial.response?.headerFields[.contentRange] == "bytes 10-19/100")
            #expect(harness.fetch(base + "/range/100", fields: [("Range", "bytes=200-")]).status == 416)
        }

        /// Downloads `url` to a file; returns the file's bytes (the file is removed after).
        private func download(_ harness: ClientHarness, _ url: String) throws -> Data? {
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<Data?>(nil)
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-httpbin-\(UUID().uuidString)")
            harness.manager.downloadTask(with: ClientHarness.request(url), destination: { _, _ in destination }) { _, file, _ in
                result.withLock { $0 = file.flatMap { try? Data(contentsOf: $0) } }
                done.signal()
            }.resume()
            #expect(done.wait(timeout: .now() + 30) == .success)
            try? FileManager.default.removeItem(at: destination)
            return result.withLock { $0 }
        }

        @Test(arguments: Wire.allCases) func streamBytesDownloadToAFile(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let direct = harness.fetch(base + "/stream-bytes/100000?chunk_size=4096&seed=3").data
            // httpbin sends at most 100 KiB.
            #expect(direct?.count == 100_000)
            #expect(try download(harness, base + "/stream-bytes/100000?chunk_size=4096&seed=3") == direct)
        }

        @Test(arguments: Wire.allCases) func downloadResumesWithRangeAndIfRange(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let harness = wire.harness()
            defer { harness.finish() }
            let size = 60_000
            let full = try #require(harness.fetch(base + "/range/\(size)").data)
            // Slow enough (about 3 s in all) to be cancelled part-way.
            let url = base + "/range/\(size)?duration=3&chunk_size=2000"
            let task = harness.manager.downloadTask(with: ClientHarness.request(url))
            task.resume()
            #expect(waitUntil(timeout: 10) { task.countOfBytesReceived >= 10_000 })
            let produced = DispatchSemaphore(value: 0)
            let resumeData = Mutex<Data?>(nil)
            task.cancel { data in
                resumeData.withLock { $0 = data }
                produced.signal()
            }
            #expect(produced.wait(timeout: .now() + 10) == .success)
            let data = try #require(resumeData.withLock { $0 })

            let done = DispatchSemaphore(value: 0)
            let outcome = Mutex<(Int?, Data?)>((nil, nil))
            try harness.manager.downloadTask(withResumeData: data, completionHandler: { response, file, _ in
                outcome.withLock { $0 = (response?.status.code, file.flatMap { try? Data(contentsOf: $0) }) }
                done.signal()
            }).resume()
            #expect(done.wait(timeout: .now() + 30) == .success)
            let (status, file) = outcome.withLock { $0 }
            #expect(status == 206)
            #expect(file == full)
        }
    }
}
