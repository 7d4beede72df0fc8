import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct MultipartBodyReaderTests {
    /// A form with every kind of part; built fresh each time because its stream is read once.
    private func makeForm(_ directory: MultipartTempDirectory) throws -> MultipartFormData {
        let form = MultipartFormData(boundary: "Boundary+0123456789ABCDEF")
        form.appendPart(withForm: Data("field value".utf8), name: "field")
        try form.appendPart(withFileData: Data((0..<200).map { UInt8($0) }), name: "data", fileName: "d.bin",
                            mimeType: "application/octet-stream")
        try form.appendPart(withFileURL: directory.url.appendingPathComponent("f.txt"), name: "file")
        try form.appendPart(with: InputStream(data: Data(repeating: 0x41, count: 3000)), name: "stream", fileName: "s.txt",
                            length: 3000, mimeType: "text/plain")
        try form.appendPart(withHeaders: [(name: "X-Part", value: "last")], body: Data("end".utf8))
        return form
    }

    @Test(arguments: [1, 7, 4096])
    func smallBuffersGiveTheSameBytesAsABigOne(bufferSize: Int) throws {
        let directory = try MultipartTempDirectory()
        _ = try directory.file("f.txt", String(repeating: "file line\n", count: 500))
        let reference = try makeForm(directory).data()
        let form = try makeForm(directory)
        let reader = try form.makeBodyReader()
        let bytes = try readAll(reader, bufferSize: bufferSize) { #expect($0 <= bufferSize) }
        #expect(Data(bytes) == reference)
        #expect(Int64(bytes.count) == form.contentLength)
        #expect(reader.bytesRead == form.contentLength)
        // The end stays the end.
        var one = [UInt8](repeating: 0, count: 1)
        #expect(try one.withUnsafeMutableBytes { try reader.read(into: $0) } == 0)
    }

    @Test func throttleIsExposedAndCapsEachRead() throws {
        let directory = try MultipartTempDirectory()
        _ = try directory.file("f.txt", String(repeating: "x", count: 10_000))
        let reference = try makeForm(directory).data()
        let form = try makeForm(directory)
        #expect(form.throttle == nil)
        form.throttleBandwidth(withPacketSize: BandwidthThrottle.suggestedPacketSize, delay: BandwidthThrottle.suggestedDelay)
        #expect(form.throttle == BandwidthThrottle(packetSize: 16 * 1024, delay: 0.2))
        form.throttleBandwidth(withPacketSize: 1000, delay: 0.05)
        let reader = try form.makeBodyReader()
        #expect(reader.throttle?.packetSize == 1000)
        #expect(reader.throttle?.delay == 0.05)
        var reads = 0
        let bytes = try readAll(reader, bufferSize: 64 * 1024) { count in
            reads += 1
            #expect(count <= 1000)
        }
        #expect(Data(bytes) == reference)
        #expect(reads == (bytes.count + 999) / 1000)
    }

    @Test func closeEndsTheReader() throws {
        let directory = try MultipartTempDirectory()
        _ = try directory.file("f.txt", "abc")
        let reader = try makeForm(directory).makeBodyReader()
        var buffer = [UInt8](repeating: 0, count: 10)
        try buffer.withUnsafeMutableBytes { buffer throws in
            #expect(try reader.read(into: buffer) == 10)
            reader.close()
            expectMultipartFailure("closed") { try reader.read(into: buffer) }
        }
    }

    @Test func readerIsUnaffectedByPartsAppendedLater() throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data("1".utf8), name: "a")
        let reader = try form.makeBodyReader()
        form.appendPart(withForm: Data("2".utf8), name: "b")
        let bytes = try readAll(reader, bufferSize: 100)
        #expect(String(decoding: bytes, as: UTF8.self) == "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--\r\n")
        #expect(Int64(bytes.count) == reader.contentLength)
    }

    /// Resident set size in bytes, from /proc/self/statm.
    private func residentBytes() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let pages = Int(statm.split(separator: " ")[1])!
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func largeFileStreamsInBoundedMemory() throws {
        let directory = try MultipartTempDirectory()
        let file = directory.url.appendingPathComponent("large.bin")
        let size = 64 * 1024 * 1024
        let fd = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0)
        #expect(ftruncate(fd, off_t(size)) == 0)
        close(fd)

        let form = MultipartFormData(boundary: "B")
        try form.appendPart(withFileURL: file, name: "big")
        let reader = try form.makeBodyReader()
        let bufferSize = MultipartBodyReader.suggestedBufferSize
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        let zeroes = [UInt8](repeating: 0, count: bufferSize)
        let before = try residentBytes()
        var total = Int64(0)
        var zeros = Int64(0)
        var largestRead = 0
        try buffer.withUnsafeMutableBytes { buffer throws in
            while true {
                let count = try reader.read(into: buffer)
                if count == 0 { break }
                largestRead = max(largestRead, count)
                total += Int64(count)
                // memcmp for the all-zero reads: a per-byte closure over 64 MiB is slow in debug builds.
                let allZero = zeroes.withUnsafeBytes { memcmp(buffer.baseAddress!, $0.baseAddress!, count) == 0 }
                zeros += allZero ? Int64(count) : Int64(buffer[..<count].count { $0 == 0 })
            }
        }
        let growth = try residentBytes() - before
        #expect(total == form.contentLength)
        #expect(zeros == Int64(size))
        #expect(largestRead <= bufferSize)
        #expect(growth < 16 * 1024 * 1024, "resident memory grew by \(growth) bytes")
    }
}
