import CAres
import Testing
@testable import UVNetworking

/// When a look-up c-ares ended is asked again, and when its refusal is its own (issue #34).
@Suite(.tags(.unit)) struct RefusedLookUpTests {
    @Test func otherEndsAreDeliveredAsTheyAre() {
        for status in [ARES_SUCCESS, ARES_ENOTFOUND, ARES_ENODATA, ARES_ETIMEOUT, ARES_ESERVFAIL, ARES_EDESTRUCTION] {
            #expect(RefusedLookUp.step(status: status, tcpFailures: 1, askedAgain: false) == .deliver(tcpRefused: false))
            #expect(RefusedLookUp.step(status: status, tcpFailures: 1, askedAgain: true) == .deliver(tcpRefused: false))
        }
    }

    /// A server that refused over UDP with no TCP failure: c-ares's own "could not contact".
    @Test func aRefusalWithoutATCPFailureIsDelivered() {
        #expect(RefusedLookUp.step(status: ARES_ECONNREFUSED, tcpFailures: 0, askedAgain: false) == .deliver(tcpRefused: false))
        #expect(RefusedLookUp.step(status: ARES_ECONNREFUSED, tcpFailures: 0, askedAgain: true) == .deliver(tcpRefused: false))
    }

    @Test func aRefusalDuringATCPFailureIsAskedAgainOnceThenIsItsOwn() {
        #expect(RefusedLookUp.step(status: ARES_ECONNREFUSED, tcpFailures: 3, askedAgain: false) == .askAgain)
        #expect(RefusedLookUp.step(status: ARES_ECONNREFUSED, tcpFailures: 1, askedAgain: true) == .deliver(tcpRefused: true))
    }
}
