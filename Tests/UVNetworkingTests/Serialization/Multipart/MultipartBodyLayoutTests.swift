import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct MultipartBodyLayoutTests {
    @Test func formFieldDataPartAndFilePartGiveExactBytes() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("report.json", "{\"ok\":true}")
        let form = MultipartFormData(boundary: "TestBoundary")
        form.appendPart(withForm: Data("value".utf8), name: "field")
        try form.appendPart(withFileData: Data("hello".utf8), name: "data", fileName: "a.txt", mimeType: "text/plain")
        try form.appendPart(withFileURL: file, name: "file")

        let expected = "--TestBoundary\r\n"
            + "Content-Disposition: form-data; name=\"field\"\r\n\r\n"
            + "value"
            + "\r\n--TestBoundary\r\n"
            + "Content-Disposition: form-data; name=\"data\"; filename=\"a.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\n"
            + "hello"
            + "\r\n--TestBoundary\r\n"
            + "Content-Disposition: form-data; name=\"file\"; filename=\"report.json\"\r\n"
            + "Content-Type: application/json\r\n\r\n"
            + "{\"ok\":true}"
            + "\r\n--TestBoundary--\r\n"
        #expect(try bodyText(form) == expected)
        #expect(form.contentLength == Int64(expected.utf8.count))
        #expect(form.contentType == "multipart/form-data; boundary=TestBoundary")
    }

    @Test func customHeadersAreSentInOrderAsGiven() throws {
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withHeaders: [(name: "Content-Disposition", value: "form-data; name=\"x\""),
                                          (name: "X-Tab", value: "a\tb ü")],
                            body: Data("1".utf8))
        #expect(try bodyText(form)
                == "--B\r\nContent-Disposition: form-data; name=\"x\"\r\nX-Tab: a\tb ü\r\n\r\n1\r\n--B--\r\n")
    }

    @Test func emptyFormHasAnEmptyBody() throws {
        let form = MultipartFormData(boundary: "B")
        #expect(form.isEmpty)
        #expect(form.contentLength == 0)
        #expect(try form.data().isEmpty)
    }

    @Test func randomBoundaryHasAFNetworkingsFormat() throws {
        let pattern = try Regex("^Boundary\\+[0-9A-F]{16}$")
        let boundaries = (0..<20).map { _ in MultipartFormData().boundary }
        for boundary in boundaries { #expect(boundary.wholeMatch(of: pattern) != nil, "\(boundary)") }
        #expect(Set(boundaries).count == boundaries.count)
        #expect(MultipartFormData.randomBoundary().wholeMatch(of: pattern) != nil)
    }

    @Test func boundaryThatIsNotATokenIsQuotedInContentType() {
        #expect(MultipartFormData(boundary: "a b:c").contentType == "multipart/form-data; boundary=\"a b:c\"")
        #expect(MultipartBoundary.isValid("x"))
        #expect(!MultipartBoundary.isValid(""))
        #expect(!MultipartBoundary.isValid("ends with space "))
        #expect(!MultipartBoundary.isValid(String(repeating: "a", count: 71)))
        #expect(!MultipartBoundary.isValid("quote\""))
    }

    @Test func contentLengthMatchesTheBytesForEveryPartKind() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("photo.PNG", String(repeating: "p", count: 1000))
        let empty = try directory.file("empty", "")
        let form = MultipartFormData()
        form.appendPart(withForm: Data(), name: "empty field")
        form.appendPart(withForm: Data("v".utf8), name: "名前")
        try form.appendPart(withFileData: Data(repeating: 7, count: 300), name: "d", fileName: "ü.bin",
                            mimeType: "application/octet-stream")
        try form.appendPart(withFileURL: file, name: "f")
        try form.appendPart(withFileURL: empty, name: "e")
        try form.appendPart(with: InputStream(data: Data(repeating: 1, count: 5000)), name: "s", fileName: "s.dat",
                            length: 5000, mimeType: "application/x-test")
        try form.appendPart(withHeaders: [], body: Data("raw".utf8))
        let announced = form.contentLength
        let body = try form.data()
        #expect(Int64(body.count) == announced)
    }

    @Test func mimeTypeComesFromTheExtensionWithAFallback() throws {
        let directory = try MultipartTempDirectory()
        let cases = ["a.png": "image/png", "b.JPG": "image/jpeg", "c.txt": "text/plain", "d.pdf": "application/pdf",
                     "e.unknownext": "application/octet-stream", "noextension": "application/octet-stream"]
        for (name, mimeType) in cases {
            let form = MultipartFormData(boundary: "B")
            try form.appendPart(withFileURL: try directory.file(name, "x"), name: "f")
            #expect(try bodyText(form).contains("filename=\"\(name)\"\r\nContent-Type: \(mimeType)\r\n\r\n"), "\(name)")
        }
    }
}
