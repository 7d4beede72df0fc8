import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// A gibibyte each way over one HTTP/2 stream to nghttpd, in bounded memory: flow control
    /// holds what the server may send to the stream's window (grown to at most 10 MiB while the
    /// consumer keeps up), and an upload is read only as the server's windows let it go out.
    @Suite(.tags(.huge)) struct HTTP2HugeTransferTests {
        private func harness() -> ClientHarness { ClientHarness { $0.httpVersion = .http2PriorKnowledge } }

        /// Reads `stream` to its end, sampling resident memory; returns the bytes and the peak growth.
        private func drain(_ stream: AsyncBodyStream, baseline: Int) async throws -> (bytes: Int, peakGrowth: Int) {
            var total = 0, chunks = 0, peak = 0
            for try await chunk in stream {
                total += chunk.count
                chunks += 1
                if chunks % 64 == 0 { peak = max(peak, residentMemoryBytes() - baseline) }
            }
            return (total, peak)
        }

        @Test func aGibibyteDownloadTakesBoundedMemory() async throws {
            let server = try TestServers.nghttpd()
            let harness = harness()
            defer { harness.finish() }
            let baseline = residentMemoryBytes()
            let started = monotonicSeconds()
            let (response, stream) = try await harness.manager.bytes(for: ClientHarness.request(server.url("/zeros-1GiB.bin").absoluteString, timeout: 300))
            #expect(response.status.code == 200)
            let (total, peak) = try await drain(stream, baseline: baseline)
            #expect(total == 1 << 30)
            print("1 GiB over h2c to an async consumer: \(String(format: "%.1f", monotonicSeconds() - started)) s, peak resident growth \(peak >> 20) MiB")
            #expect(peak < 64 << 20, "resident memory grew by \(peak >> 20) MiB during a 1 GiB download")
        }

        /// A streamed 1 GiB body, POSTed; nghttpd (--echo-upload) sends it back, read as it comes.
        @Test func aGibibyteUploadTakesBoundedMemory() async throws {
            let server = try TestServers.nghttpd()
            let harness = harness()
            defer { harness.finish() }
            let log = GeneratedBodyLog()
            var request = ClientHarness.request(server.url("/upload").absoluteString, method: .post, timeout: 600)
            request.bodyStream = GeneratedBody.body(.init(produce: 1 << 30, fast: true, sampleMemoryEvery: 64), declaredLength: 1 << 30, log: log)
            let started = monotonicSeconds()
            let (response, stream) = try await harness.manager.bytes(for: request)
            #expect(response.status.code == 200)
            let (total, peak) = try await drain(stream, baseline: log.baselineResident)
            #expect(log.bytes == 1 << 30)
            #expect(total == 1 << 30, "the echo carries every byte sent")
            #expect(log.readsOnLoop == 0)
            let growth = max(peak, log.peakResidentGrowth)
            print("1 GiB up and back over h2c: \(String(format: "%.1f", monotonicSeconds() - started)) s, peak resident growth \(growth >> 20) MiB "
                  + "(\(log.peakResidentGrowth >> 20) MiB while sending, \(peak >> 20) MiB while reading the echo)")
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB during a 1 GiB upload")
        }
    }
}
