import Foundation
import Testing
@testable import UVFetchCore

/// `RecordEncoder` writes, byte for byte, what Foundation's JSONEncoder wrote for a record
/// before it (kept here only, as the reference): the same keys in the same order, the same
/// escapes and the same numbers, over every optional field and hostile strings and numbers.
@Suite(.tags(.unit)) struct RecordEncoderTests {
    /// The encoder `RecordEncoder` replaced, configured as it was.
    private static let reference: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The two encodings of `record`, as text for readable failures.
    private func encodings(_ record: FetchRecord) -> (String?, String?) {
        let expected = (try? Self.reference.encode(record)).map { String(decoding: $0, as: UTF8.self) }
        let actual = RecordEncoder().line(for: record).map { String(decoding: $0, as: UTF8.self) }
        return (actual, expected)
    }

    private static let hostile: [String] = [
        "", "plain", "http://h.test/a/b?c=d&e=f#g", "quote \" and backslash \\ and slash /",
        String(decoding: (0..<0x20).map { UInt8($0) } + [0x7F], as: UTF8.self),
        "tab\tnew\nline\rcr\u{8}bs\u{C}ff", "é日本語👍🏽", "\u{2028}\u{2029}\u{FEFF}\u{0085}",
        // Bytes that are not UTF-8 become U+FFFD in a String, as `url` holds them.
        String(decoding: [0x68, 0xFF, 0xC0, 0x80, 0xED, 0xA0, 0x80, 0x69], as: UTF8.self),
        "\\u0000 \\\" \\/", String(repeating: "long/", count: 400),
    ]

    private static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 1.5, 2.5e-10, 1e-7, 0.0001, 123456789, 1e15, 1e16, 1e17, 9007199254740992, 9007199254740994,
        1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude,
        .pi, 12.345678901234567, 0.30000000000000004,
    ]

    private static let integers = [0, 1, -1, 9, 10, 99, 100, 12345, 200, 404, 599, Int(Int32.max), .max, .min, .min + 1]

    @Test func everyCombinationOfOptionalFields() {
        for mask in 0..<(1 << 12) {
            func has(_ bit: Int) -> Bool { mask & (1 << bit) != 0 }
            var record = FetchRecord(
                url: "http://127.0.0.1:8080/a/b", status: has(0) ? 200 : nil, bytes: 1234,
                timings: .init(total: 12.5, connect: has(1) ? 0.25 : nil, tls: has(2) ? 3.0 : nil, firstByte: has(3) ? 1e-3 : nil),
                error: has(4) ? FetchRecord.Failure(code: "connectionRefused", message: "refused: 127.0.0.1:1", kind: "transport") : nil,
                attempts: 2, file: has(5) ? "/tmp/out/b" : nil, urlBase64: has(6) ? "aP9p" : nil,
                requestURL: "http://127.0.0.1:8080/a/b", effectiveURL: "http://127.0.0.1:8080/c",
                etag: has(7) ? "W/\"x-1\"" : nil, lastModified: has(8) ? "Tue, 01 Dec 2026 10:00:00 GMT" : nil, notModified: has(9))
            record.capture = has(10) ? FetchRecord.Capture(date: "2026-12-03T10:00:00.123456Z", recordID: "<urn:uuid:1>") : nil
            record.cache = has(11) ? "revalidated" : nil
            let (actual, expected) = encodings(record)
            #expect(actual != nil)
            #expect(actual == expected, "fields \(mask)")
        }
    }

    @Test func hostileStringsInEveryStringField() {
        for text in Self.hostile {
            var record = FetchRecord(url: text, status: 200, bytes: 0, timings: .init(total: 1),
                                     error: FetchRecord.Failure(code: text, message: text, kind: text), attempts: 1, file: text,
                                     urlBase64: text, requestURL: text, effectiveURL: text, etag: text, lastModified: text)
            record.capture = FetchRecord.Capture(date: text, recordID: text)
            record.cache = text
            let (actual, expected) = encodings(record)
            #expect(actual == expected, "\(Array(text.utf8))")
        }
    }

    @Test func numbersAtTheirLimits() {
        for value in Self.doubles {
            for number in [value, -value] {
                let record = FetchRecord(url: "u", status: nil, bytes: 0,
                                         timings: .init(total: number, connect: number, tls: number, firstByte: number),
                                         error: nil, attempts: 1)
                let (actual, expected) = encodings(record)
                #expect(actual == expected, "\(number)")
            }
        }
        for value in Self.integers {
            let record = FetchRecord(url: "u", status: value, bytes: value, timings: .init(total: 0), error: nil, attempts: value)
            let (actual, expected) = encodings(record)
            #expect(actual == expected, "\(value)")
        }
    }

    /// Thousands of records drawn from a fixed seed: doubles from any bit pattern (every
    /// exponent), strings spliced from the hostile ones, fields present or not at random.
    @Test func manyRandomRecords() {
        var random = SplitMix64(seed: 35)
        func double() -> Double {
            while true {
                let value = Double(bitPattern: random.next())
                if value.isFinite { return value }
            }
        }
        func string() -> String {
            (0..<Int(random.next() % 4)).map { _ in Self.hostile[Int(random.next() % UInt64(Self.hostile.count))].prefix(40) }.joined()
        }
        func maybe<T>(_ make: () -> T) -> T? { random.next() % 2 == 0 ? make() : nil }
        for index in 0..<3_000 {
            // Timings as runs measure them (milliseconds with a fraction) and from any bit pattern.
            let timing: () -> Double = index % 2 == 0 ? { Double(random.next() % 10_000_000) / 997 } : double
            let record = FetchRecord(
                url: string(), status: maybe { Int(bitPattern: UInt(random.next())) }, bytes: Int(bitPattern: UInt(random.next())),
                timings: .init(total: timing(), connect: maybe(timing), tls: maybe(timing), firstByte: maybe(timing)),
                error: maybe { FetchRecord.Failure(code: string(), message: string(), kind: string()) },
                attempts: Int(random.next() % 10), file: maybe(string), urlBase64: maybe(string),
                requestURL: string(), effectiveURL: string(), etag: maybe(string), lastModified: maybe(string),
                notModified: random.next() % 2 == 0, cache: maybe(string))
            let (actual, expected) = encodings(record)
            #expect(actual == expected, "record \(index)")
        }
    }

    /// JSONEncoder refuses NaN and the infinities (its default strategy); so does the encoder,
    /// leaving the buffer as it was, and the record gets no line.
    @Test func nonFiniteTimingsAreRefused() {
        for value in [Double.nan, .infinity, -.infinity, .signalingNaN] {
            let records = [
                FetchRecord(url: "u", status: 200, bytes: 0, timings: .init(total: value), error: nil, attempts: 1),
                FetchRecord(url: "u", status: 200, bytes: 0, timings: .init(total: 1, connect: value), error: nil, attempts: 1),
                FetchRecord(url: "u", status: 200, bytes: 0, timings: .init(total: 1, tls: value), error: nil, attempts: 1),
                FetchRecord(url: "u", status: 200, bytes: 0, timings: .init(total: 1, firstByte: value), error: nil, attempts: 1),
            ]
            for record in records {
                #expect((try? Self.reference.encode(record)) == nil)
                #expect(RecordEncoder().line(for: record) == nil)
                var bytes = Array("kept\n".utf8)
                #expect(!RecordEncoder().append(record, to: &bytes))
                #expect(bytes == Array("kept\n".utf8))
            }
        }
    }

    @Test func appendingKeepsWhatTheBufferHeld() throws {
        let record = FetchRecord(url: "http://h.test/", status: 200, bytes: 5, timings: .init(total: 0.5), error: nil, attempts: 1)
        var bytes = Array("before\n".utf8)
        #expect(RecordEncoder().append(record, to: &bytes))
        #expect(bytes == Array("before\n".utf8) + Array(try Self.reference.encode(record)))
    }
}
