import Testing
@testable import UVNetworking

/// Which servers' TCP is taken as refused, and for how long (issue #34).
@Suite(.tags(.loopback)) struct TCPRefusalMemoryTests {
    let window = TCPRefusalMemory.windowMilliseconds

    @Test func aRefusalLastsTheWindowForItsServerOnly() {
        var memory = TCPRefusalMemory()
        #expect(!memory.isRefused("127.0.0.1:53", now: 0))
        memory.recordRefusal(of: "127.0.0.1:53", now: 1_000)
        #expect(memory.isRefused("127.0.0.1:53", now: 1_000))
        #expect(memory.isRefused("127.0.0.1:53", now: 1_000 + window - 1))
        #expect(!memory.isRefused("127.0.0.1:53", now: 1_000 + window))
        #expect(!memory.isRefused("127.0.0.1:5353", now: 1_000))
        #expect(!memory.isRefused("[::1]:53", now: 1_000))
    }

    @Test func aNewRefusalExtendsTheWindow() {
        var memory = TCPRefusalMemory()
        memory.recordRefusal(of: "127.0.0.1:53", now: 0)
        memory.recordRefusal(of: "127.0.0.1:53", now: window - 1)
        #expect(memory.isRefused("127.0.0.1:53", now: window + 10))
        #expect(!memory.isRefused("127.0.0.1:53", now: 2 * window - 1))
    }

    @Test func expiredRefusalsAreForgottenAndOthersKept() {
        var memory = TCPRefusalMemory()
        memory.recordRefusal(of: "127.0.0.1:53", now: 0)
        memory.recordRefusal(of: "127.0.0.2:53", now: window / 2)
        memory.recordRefusal(of: "127.0.0.3:53", now: window)
        #expect(!memory.isRefused("127.0.0.1:53", now: window))
        #expect(memory.isRefused("127.0.0.2:53", now: window))
        #expect(memory.isRefused("127.0.0.3:53", now: window))
    }
}
