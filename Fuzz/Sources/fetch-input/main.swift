// Fuzzes uvfetch's input readers: the URL list (URLInput over LineReader, and EntryCounter,
// which counts entries for the progress line without parsing them), and --resume's reading of
// a JSON-lines record file (RecordFileScan, with RecordLineShape's fast path).
//
// Input: the first byte's low bit picks the reader, the second byte the cuts; the rest is the
// file's bytes, written to a temporary file that is read as uvfetch reads its files.
// - 0: a URL list: any bytes (invalid UTF-8, NULs, CR/LF mixes, comments, blank lines, long lines).
// - 1: a --jsonl file that --resume continues.
//
// Invariants (URL list):
// - A line's entry depends only on that line: the entries read from the file are exactly those of
//   its lines parsed one by one (split here at LF, one CR before it dropped, a byte order mark
//   at the file's start dropped), numbered from 1.
// - Every URL accepted is absolute http(s) with a host.
// - EntryCounter counts what the reader yields, whether given the file whole (as uvfetch does)
//   or cut into pieces anywhere.
// Invariants (records):
// - The scan's verdict (how the file ends, or which line is no record and why) and the URLs it
//   keeps do not depend on the read size: 64 KiB, as uvfetch reads, and 1 to 97 bytes.
// - The fast path agrees with JSONDecoder: a line it reads, which decodes as a record, names the
//   same URL key (lines with a key given twice left out: JSON leaves their meaning open).
// - --resume (ResumableRecords) takes exactly the files the scan does, keeps the same URLs,
//   changes a refused file not at all and a taken one only as its tail calls for (a newline
//   added, a torn line cut off), holds its lock while alive, and leaves a file that reads whole.

import Foundation
import FuzzSupport
@testable import UVFetchCore

/// The file every input is written to, reused so that no input leaves a file behind.
let descriptor: Int32 = {
    var template = Array("/tmp/uvfetch-fuzz-input-XXXXXX".utf8CString)
    let descriptor = mkstemp(&template)
    fuzzCheck(descriptor >= 0, "no temporary file")
    unlink(String(cString: template))
    return descriptor
}()

func write(_ bytes: ArraySlice<UInt8>) {
    fuzzCheck(ftruncate(descriptor, 0) == 0, "ftruncate failed")
    let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    fuzzCheck(written == bytes.count, "pwrite wrote \(written) of \(bytes.count)")
}

/// The file's lines as LineReader ends them: at LF, without one CR before it, and without the
/// UTF-8 byte order mark that may start the file.
func lines(_ bytes: ArraySlice<UInt8>) -> [[UInt8]] {
    var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
    if lines.last == [] { lines.removeLast() }
    if let first = lines.first, first.starts(with: [0xEF, 0xBB, 0xBF]) { lines[0] = Array(first.dropFirst(3)) }
    return lines.map { $0.last == UInt8(ascii: "\r") ? Array($0.dropLast()) : $0 }
}

func fuzzURLList(_ bytes: ArraySlice<UInt8>, seed: UInt8) {
    guard let input = try? URLInput(arguments: [], inputPath: "/proc/self/fd/\(descriptor)") else {
        fuzzCheck(false, "the input file did not open")
        return
    }
    let entries = Array(input)
    let expected = lines(bytes).enumerated().compactMap { number, line in URLInput.entry(bytes: line, place: "line \(number + 1)") }
    fuzzCheck(entries == expected, "the file gave \(entries.count) entries, its lines one by one \(expected.count): \(entries) vs \(expected)")
    for case .url(let url, let text, _) in entries {
        let scheme = url.scheme?.lowercased()
        fuzzCheck(scheme == "http" || scheme == "https", "\(text.debugDescription) accepted as \(url)")
        fuzzCheck(url.host?.isEmpty == false, "\(text.debugDescription) accepted without a host: \(url)")
    }
    fuzzCheck(input.countEntries() == entries.count, "counted \(input.countEntries() ?? -1) entries, read \(entries.count)")
    var counter = EntryCounter()
    var start = bytes.startIndex
    for cut in splitPoints(count: bytes.count, seed: seed) {
        bytes[start..<(bytes.startIndex + cut)].withUnsafeBytes { counter.feed($0) }
        start = bytes.startIndex + cut
    }
    fuzzCheck(counter.finish() == entries.count, "counted in pieces \(counter.count), read \(entries.count)")
}

enum Verdict: Equatable {
    case tail(RecordFileScan.Tail, recorded: Int)
    case notARecord(RecordFileScan.NotARecord)
    case readFailed
}

func scan(chunkSize: Int) -> Verdict {
    let recorded = RecordedURLs()
    do {
        let tail = try RecordFileScan.scan(descriptor, into: recorded, chunkSize: chunkSize)
        return .tail(tail, recorded: recorded.count)
    } catch let error as RecordFileScan.NotARecord {
        return .notARecord(error)
    } catch {
        return .readFailed
    }
}

/// What JSONDecoder reads of a record: the fields --resume uses.
struct Record: Decodable {
    var url: String
    var urlBase64: String?
    var requestURL: String
    var attempts: Int
}

/// The file's bytes as they are now.
func fileBytes() -> [UInt8] {
    var status = stat()
    fuzzCheck(fstat(descriptor, &status) == 0, "fstat failed")
    var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
    let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    fuzzCheck(read == bytes.count, "pread read \(read) of \(bytes.count)")
    return bytes
}

/// Opens the file as `--resume` does (ResumableRecords: scan, lock, repair) and checks what it
/// did against the scan's verdict.
func resume(_ bytes: ArraySlice<UInt8>, verdict: Verdict) {
    let path = "/proc/self/fd/\(descriptor)"
    let records: ResumableRecords
    do {
        records = try ResumableRecords(path: path)
    } catch {
        guard case .notARecord = verdict, case .notResumable = error else {
            return fuzzCheck(false, "--resume refused a file scanned as \(verdict): \(error)")
        }
        fuzzCheck(fileBytes().elementsEqual(bytes), "a refused file was changed")
        return
    }
    guard case .tail(let tail, let count) = verdict else { return fuzzCheck(false, "--resume took a file scanned as \(verdict)") }
    fuzzCheck(records.recorded.count == count, "--resume kept \(records.recorded.count) URLs, the scan \(count)")
    let repaired: [UInt8]
    switch tail {
    case .whole: repaired = Array(bytes)
    case .missingNewline: repaired = Array(bytes) + [UInt8(ascii: "\n")]
    case .torn(_, let offset, _): repaired = Array(bytes.prefix(Int(offset)))
    }
    fuzzCheck(fileBytes() == repaired, "--resume left other bytes than \(tail) calls for")
    fuzzCheck((records.notice == nil) == (tail == .whole), "a notice \(String(describing: records.notice)) for \(tail)")
    // The lock is held while the records live: a second run is refused.
    fuzzCheck((try? ResumableRecords(path: path)) == nil, "a second --resume run took a locked file")
    withExtendedLifetime(records) {}
    // Repaired, the file reads whole, with the same URLs.
    fuzzCheck(scan(chunkSize: 1 << 16) == .tail(.whole, recorded: count), "the repaired file does not read whole")
}

func fuzzRecords(_ bytes: ArraySlice<UInt8>, seed: UInt8) {
    let whole = scan(chunkSize: 1 << 16)
    fuzzCheck(whole != .readFailed, "reading the file failed")
    let small = 1 + Int(seed % 97)
    let cut = scan(chunkSize: small)
    fuzzCheck(cut == whole, "read 64 KiB at a time: \(whole); \(small) bytes at a time: \(cut)")
    resume(bytes, verdict: whole)
    let decoder = JSONDecoder()
    for line in bytes.split(separator: UInt8(ascii: "\n")) {
        // A key given twice means what the reader makes of it (RFC 8259 §4): the fast path takes
        // the last "url", JSONDecoder the first. RecordWriter never writes one twice.
        let twice = ["\"url\"", "\"urlBase64\""].contains { key in String(decoding: line, as: UTF8.self).components(separatedBy: key).count > 2 }
        guard !twice, let fast = line.withUnsafeBytes({ RecordLineShape.urlKey(of: $0) }),
              let record = try? decoder.decode(Record.self, from: Data(line)) else { continue }
        let slow = record.urlBase64.map { Data(base64Encoded: $0).map { RecordedURLKey(bytes: Array($0)) } } ?? RecordedURLKey(text: record.url)
        fuzzCheck(slow == fast, "the fast path and JSONDecoder read different URLs from \(String(decoding: line, as: UTF8.self).debugDescription)")
    }
}

runFuzzer { raw in
    var input = FuzzInput(raw)
    let records = input.flag()
    let seed = input.byte()
    let bytes = input.remaining()
    write(bytes)
    if records { fuzzRecords(bytes, seed: seed) } else { fuzzURLList(bytes, seed: seed) }
}
