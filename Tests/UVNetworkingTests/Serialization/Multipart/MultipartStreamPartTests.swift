import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct MultipartStreamPartTests {
    @Test func streamOfTheDeclaredLengthIsSentExactly() throws {
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(with: InputStream(data: Data("0123456789".utf8)), name: "s", fileName: "s.txt", length: 10,
                            mimeType: "text/plain")
        let expected = "--B\r\nContent-Disposition: form-data; name=\"s\"; filename=\"s.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\n0123456789\r\n--B--\r\n"
        #expect(form.contentLength == Int64(expected.utf8.count))
        #expect(try bodyText(form) == expected)
    }

    @Test func streamShorterThanDeclaredFailsTheRead() throws {
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(with: InputStream(data: Data("abc".utf8)), name: "s", fileName: "s", length: 5, mimeType: "a/b")
        expectMultipartFailure("ended after 3 of its declared 5") { try form.data() }
    }

    @Test func streamLongerThanDeclaredFailsTheRead() throws {
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(with: InputStream(data: Data("abcdef".utf8)), name: "s", fileName: "s", length: 5, mimeType: "a/b")
        expectMultipartFailure("more than its declared 5") { try form.data() }
    }

    @Test func emptyStreamMustBeDeclaredEmpty() throws {
        let ok = MultipartFormData(boundary: "B")
        try ok.appendPart(with: InputStream(data: Data()), name: "s", fileName: "s", length: 0, mimeType: "a/b")
        #expect(Int64(try ok.data().count) == ok.contentLength)
        let longer = MultipartFormData(boundary: "B")
        try longer.appendPart(with: InputStream(data: Data("x".utf8)), name: "s", fileName: "s", length: 0, mimeType: "a/b")
        expectMultipartFailure("more than its declared 0") { try longer.data() }
    }

    @Test func negativeLengthIsRejected() {
        expectMultipartFailure {
            try MultipartFormData().appendPart(with: InputStream(data: Data()), name: "s", fileName: "s", length: -1, mimeType: "a/b")
        }
    }

    @Test func streamIsReadOnlyOnce() throws {
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(with: InputStream(data: Data("abc".utf8)), name: "s", fileName: "s", length: 3, mimeType: "a/b")
        #expect(!form.isReplayable)
        _ = try form.data()
        expectMultipartFailure("only once") { try form.makeBodyReader() }
    }

    @Test func streamFromAFileIsReadToo() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("s.bin", String(repeating: "z", count: 100_000))
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(with: InputStream(url: file)!, name: "s", fileName: "s.bin", length: 100_000, mimeType: "a/b")
        let body = try form.data()
        #expect(Int64(body.count) == form.contentLength)
        #expect(body.filter { $0 == UInt8(ascii: "z") }.count == 100_000)
    }
}
