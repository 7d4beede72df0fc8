@testable import UVNetworking

/// HTTP/2 frames a test plays as the server (RFC 9113 §4.1 layout; header blocks in HPACK's
/// literal forms without indexing, RFC 7541 §6.2.2, so no dynamic table is involved).
enum HTTP2Frames {
    static let data: UInt8 = 0, headers: UInt8 = 1, rstStream: UInt8 = 3, settings: UInt8 = 4, pushPromise: UInt8 = 5,
               ping: UInt8 = 6, goAway: UInt8 = 7, windowUpdate: UInt8 = 8, continuation: UInt8 = 9
    static let endStream: UInt8 = 0x1, endHeaders: UInt8 = 0x4, ack: UInt8 = 0x1

    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: Int32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        var bytes: [UInt8] = [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
        bytes += withUnsafeBytes(of: UInt32(bitPattern: stream).bigEndian, Array.init)
        return bytes + payload
    }

    static func settings(_ entries: [(UInt16, UInt32)] = []) -> [UInt8] {
        frame(settings, payload: entries.flatMap { id, value in
            withUnsafeBytes(of: id.bigEndian, Array.init) + withUnsafeBytes(of: value.bigEndian, Array.init)
        })
    }

    private static func frame(_ type: UInt8, payload: [UInt8]) -> [UInt8] { frame(type, flags: 0, stream: 0, payload) }

    static var settingsAck: [UInt8] { frame(settings, flags: ack) }

    /// An HPACK integer with an `prefix`-bit prefix (RFC 7541 §5.1).
    static func integer(_ value: Int, prefix: Int, first: UInt8 = 0) -> [UInt8] {
        let limit = (1 << prefix) - 1
        if value < limit { return [first | UInt8(value)] }
        var bytes: [UInt8] = [first | UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        bytes.append(UInt8(rest))
        return bytes
    }

    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00] + integer(name.utf8.count, prefix: 7) + Array(name.utf8) + integer(value.utf8.count, prefix: 7) + Array(value.utf8)
    }

    static func headerBlock(status: Int, _ fields: [(String, String)] = []) -> [UInt8] {
        literal(":status", String(status)) + fields.flatMap { literal($0.0, $0.1) }
    }

    static func headers(stream: Int32, status: Int, _ fields: [(String, String)] = [], endStream: Bool = false) -> [UInt8] {
        frame(headers, flags: endHeaders | (endStream ? Self.endStream : 0), stream: stream, headerBlock(status: status, fields))
    }

    static func data(stream: Int32, _ bytes: [UInt8], endStream: Bool = false) -> [UInt8] {
        frame(data, flags: endStream ? Self.endStream : 0, stream: stream, bytes)
    }

    static func goAway(lastStream: Int32, code: UInt32 = 0) -> [UInt8] {
        frame(goAway, payload: withUnsafeBytes(of: UInt32(bitPattern: lastStream).bigEndian, Array.init)
              + withUnsafeBytes(of: code.bigEndian, Array.init))
    }

    static func rstStream(stream: Int32, code: UInt32) -> [UInt8] {
        frame(rstStream, flags: 0, stream: stream, withUnsafeBytes(of: code.bigEndian, Array.init))
    }
}

/// Plays `bytes` (server frames) into `session`, as the connection does with what it reads.
func feed(_ session: HTTP2Session, _ bytes: [UInt8]) throws {
    var failure: HTTP2Error?
    // A do/catch, not a typed-throws closure: that one crashes the compiler's IR generation.
    bytes.withUnsafeBytes { raw in
        do {
            try session.receive(raw)
        } catch {
            failure = error as? HTTP2Error
        }
    }
    if let failure { throw failure }
}
