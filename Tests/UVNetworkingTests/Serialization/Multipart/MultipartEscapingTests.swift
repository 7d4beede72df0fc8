import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct MultipartEscapingTests {
    private func headerBlock(_ form: MultipartFormData) throws -> String {
        let text = try bodyText(form)
        let start = text.index(text.startIndex, offsetBy: "--B\r\n".count)
        let end = text.range(of: "\r\n\r\n")!.upperBound
        return String(text[start..<end])
    }

    @Test func quoteBackslashCRAndLFInNamesArePercentEncoded() throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data("v".utf8), name: "a\"b\\c\r\nd")
        #expect(try headerBlock(form) == "Content-Disposition: form-data; name=\"a%22b%5Cc%0D%0Ad\"\r\n\r\n")
    }

    @Test func otherControlBytesAreEncodedButTabIsKept() throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data(), name: "x\u{0}y\u{7F}z\tw")
        #expect(try headerBlock(form) == "Content-Disposition: form-data; name=\"x%00y%7Fz\tw\"\r\n\r\n")
    }

    @Test func nameEndingInBackslashCannotEscapeTheClosingQuote() throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data(), name: "a\\")
        #expect(try headerBlock(form) == "Content-Disposition: form-data; name=\"a%5C\"\r\n\r\n")
    }

    @Test func asciiFilenameWithQuotesAndNewlinesIsEscapedWithoutFilenameStar() throws {
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileData: Data(), name: "f", fileName: "evil\".txt\r\nX-Injected: 1", mimeType: "text/plain")
        #expect(try headerBlock(form)
                == "Content-Disposition: form-data; name=\"f\"; filename=\"evil%22.txt%0D%0AX-Injected: 1\"\r\n"
                + "Content-Type: text/plain\r\n\r\n")
    }

    @Test func nonASCIIFilenameGetsAnASCIIFallbackAndFilenameStar() throws {
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileData: Data(), name: "f", fileName: "na\u{EF}ve \"r\u{E9}sum\u{E9}\" 日本.txt",
                            mimeType: "text/plain")
        #expect(try headerBlock(form)
                == "Content-Disposition: form-data; name=\"f\"; filename=\"naive %22resume%22 __.txt\"; "
                + "filename*=UTF-8''na%C3%AFve%20%22r%C3%A9sum%C3%A9%22%20%E6%97%A5%E6%9C%AC.txt\r\n"
                + "Content-Type: text/plain\r\n\r\n")
    }

    @Test func nonASCIINamesAreSentAsUTF8() throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data(), name: "名前\"")
        let body = try form.data()
        let expected = Data("--B\r\nContent-Disposition: form-data; name=\"名前%22\"\r\n\r\n\r\n--B--\r\n".utf8)
        #expect(body == expected)
        #expect(form.contentLength == Int64(expected.count))
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b"])
    func controlBytesInCustomHeaderValuesAreRejected(value: String) {
        let form = MultipartFormData(boundary: "B")
        expectMultipartFailure("X-Test") { try form.appendPart(withHeaders: [(name: "X-Test", value: value)], body: Data()) }
        #expect(form.isEmpty)
    }

    @Test(arguments: ["", "Bad Name", "a:b", "a\r\nb"])
    func customHeaderNamesMustBeTokens(name: String) {
        let form = MultipartFormData(boundary: "B")
        expectMultipartFailure("not an HTTP token") { try form.appendPart(withHeaders: [(name: name, value: "v")], body: Data()) }
    }

    @Test func controlBytesInAMIMETypeAreRejected() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("f.txt", "x")
        let form = MultipartFormData(boundary: "B")
        expectMultipartFailure { try form.appendPart(withFileData: Data(), name: "f", fileName: "f", mimeType: "text/plain\r\nX: 1") }
        expectMultipartFailure { try form.appendPart(withFileURL: file, name: "f", fileName: "f", mimeType: "a\nb") }
        expectMultipartFailure {
            try form.appendPart(with: InputStream(data: Data()), name: "s", fileName: "s", length: 0, mimeType: "a\rb")
        }
        #expect(form.isEmpty)
    }
}
