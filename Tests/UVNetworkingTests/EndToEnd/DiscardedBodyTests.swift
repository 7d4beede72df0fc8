import Foundation
import Synchronization
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// `discardsResponseBody`: bodies counted and dropped as they arrive, in flat memory.
    @Suite(.tags(.nginx)) struct DiscardedBody {
        /// Runs `url` with the body discarded; returns the outcome, the count and what the
        /// data hook saw.
        private func fetchDiscarding(_ url: String, in harness: ClientHarness) -> (Outcome?, Int64, Int) {
            let hooked = Atomic<Int>(0)
            harness.manager.dataTaskDidReceiveData = { _, data in hooked.add(data.count, ordering: .relaxed) }
            let (task, wait) = harness.makeTask(ClientHarness.request(url))
            task.discardsResponseBody = true
            task.resume()
            let outcome = wait(60)
            return (outcome, task.countOfBytesDiscarded, hooked.load(ordering: .relaxed))
        }

        @Test func bodiesAreCountedNotKeptAndTheDataHookStillSeesThem() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            defer { harness.finish() }
            let (outcome, discarded, hooked) = fetchDiscarding(nginx.baseURL + "/large-8m", in: harness)
            #expect(outcome?.status == 200)
            #expect(outcome?.data?.isEmpty == true)  // the serializer got no bytes
            #expect(discarded == Int64(NginxServer.large8MSize))
            #expect(hooked == NginxServer.large8MSize)
            // Kept by default: the flag is the task's, not the session's.
            #expect(harness.fetch(nginx.baseURL + "/large").data?.count == NginxServer.largeSize)
        }

        @Test(arguments: Wire.allCases) func theCountIsOfDecodedBytesAndOfTheFinalResponseOnly(_ wire: Wire) throws {
            let base = try wire.httpbinBaseURL()
            let nginx = try TestServers.nginx()
            let harness = wire.harness()
            defer { harness.finish() }
            let kept = try #require(harness.fetch(base + "/gzip").data)
            let (gzip, gzipCount, _) = fetchDiscarding(base + "/gzip", in: harness)
            #expect(gzip?.status == 200)
            // httpbin's echo differs only in header values of equal length, so sizes match.
            #expect(gzipCount == Int64(kept.count))
            // A redirect's own body is not the task's.
            let (redirected, redirectCount, _) = fetchDiscarding(nginx.baseURL + "/redirect", in: harness)
            #expect(redirected?.status == 200)
            #expect(redirectCount == Int64(NginxServer.helloBody.utf8.count))
        }

        @Test(.tags(.huge)) func twoGigabytesPassInFlatMemory() throws {
            let nginx = try TestServers.nginx()
            let harness = ClientHarness()
            defer { harness.finish() }
            let before = residentMemoryBytes()
            let (outcome, discarded, _) = fetchDiscarding(nginx.baseURL + "/sparse-2g", in: harness)
            let growth = residentMemoryBytes() - before
            #expect(outcome?.status == 200)
            #expect(discarded == NginxServer.sparseSize)
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB")
        }
    }
}
