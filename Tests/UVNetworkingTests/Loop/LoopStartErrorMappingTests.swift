import CUV
import Testing
@testable import UVNetworking

/// A loop that cannot start reports the `NetworkingError` the public API has always reported.
@Suite(.tags(.loopback)) struct LoopStartErrorMappingTests {
    @Test func mapsToLoopShutDownNamingTheCall() {
        let mapped = NetworkingError(LoopStartError(call: "uv_async_init", status: UV_EMFILE.rawValue))
        #expect(mapped.code == .loopShutDown)
        #expect(mapped.detail == "the event loop could not start: uv_async_init failed: EMFILE (too many open files)")
    }
}
