import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct MultipartFilePartTests {
    @Test func missingFileIsRejectedWhenAppended() throws {
        let directory = try MultipartTempDirectory()
        let form = MultipartFormData()
        expectMultipartFailure("not reachable") { try form.appendPart(withFileURL: directory.url.appendingPathComponent("missing.txt"), name: "f") }
        #expect(form.isEmpty)
    }

    @Test func directoryIsRejected() throws {
        let directory = try MultipartTempDirectory()
        expectMultipartFailure("directory") { try MultipartFormData().appendPart(withFileURL: directory.url, name: "f") }
    }

    @Test func nonFileURLIsRejected() {
        expectMultipartFailure("file URL") { try MultipartFormData().appendPart(withFileURL: URL(string: "http://example.com/a.txt")!, name: "f") }
    }

    @Test func nonRegularFileIsRejected() {
        expectMultipartFailure("regular file") { try MultipartFormData().appendPart(withFileURL: URL(fileURLWithPath: "/dev/null"), name: "f") }
    }

    @Test(.enabled(if: getuid() != 0, "root reads files whatever their mode"))
    func unreadableFileIsRejected() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("secret.txt", "x")
        #expect(chmod(file.path, 0) == 0)
        expectMultipartFailure("cannot be read") { try MultipartFormData().appendPart(withFileURL: file, name: "f") }
    }

    @Test func fileThatGrewAfterAppendFailsTheRead() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("f.txt", "abc")
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileURL: file, name: "f")
        try Data("abcdef".utf8).write(to: file)
        expectMultipartFailure("changed size") { try form.data() }
    }

    @Test func fileThatShrankAfterAppendFailsTheRead() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("f.txt", "abcdef")
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileURL: file, name: "f")
        try Data("ab".utf8).write(to: file)
        expectMultipartFailure("changed size") { try form.data() }
    }

    @Test func fileThatChangesWhileBeingReadFailsAndLaterReadsFailToo() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("f.txt", "abcdef")
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileURL: file, name: "f")
        let reader = try form.makeBodyReader()
        let head = "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\n"
        var buffer = [UInt8](repeating: 0, count: head.utf8.count + 1)
        try buffer.withUnsafeMutableBytes { buffer throws in
            // The boundary, the headers and the file's first byte.
            #expect(try reader.read(into: buffer) == buffer.count)
            #expect(Array(buffer) == Array((head + "a").utf8))
            #expect(truncate(file.path, 2) == 0)
            expectMultipartFailure("shrank") { try readAll(reader, bufferSize: 1) }
            expectMultipartFailure("shrank") { try reader.read(into: buffer) }
        }
    }

    @Test func fileDeletedAfterAppendFailsTheRead() throws {
        let directory = try MultipartTempDirectory()
        let file = try directory.file("f.txt", "abc")
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileURL: file, name: "f")
        try FileManager.default.removeItem(at: file)
        expectMultipartFailure("cannot open") { try form.data() }
    }

    @Test func formWithOnlyFilesAndDataCanBeReadAgain() throws {
        let directory = try MultipartTempDirectory()
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileURL: try directory.file("f.txt", "abc"), name: "f")
        form.appendPart(withForm: Data("x".utf8), name: "x")
        #expect(form.isReplayable)
        #expect(try form.data() == form.data())
    }
    /// A part past every 32-bit length (a sparse 5 GiB file: no disk used, nothing read): the
    /// form and its reader announce its exact 64-bit length. (Streaming a large file part in
    /// bounded memory is MultipartUploads' test.)
    @Test func aFilePartBeyondFourGiBHasItsExactLength() throws {
        let size: Int64 = 5 << 30
        let file = try makeSparseFile("five-gib.bin", size: size)
        defer { try? FileManager.default.removeItem(at: file) }
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileURL: file, name: "f", fileName: "five-gib.bin", mimeType: "application/octet-stream")
        let overhead = try { () throws -> Int64 in
            let empty = try makeSparseFile("empty.bin", size: 0)
            defer { try? FileManager.default.removeItem(at: empty) }
            let small = MultipartFormData(boundary: "B")
            // The same part names and file name length, so only the body differs.
            try small.appendPart(withFileURL: empty, name: "f", fileName: "five-gib.bin", mimeType: "application/octet-stream")
            return small.contentLength
        }()
        #expect(form.contentLength == overhead + size)
        #expect(try form.makeBodyReader().contentLength == form.contentLength)
    }
}
