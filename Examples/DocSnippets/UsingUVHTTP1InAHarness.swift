// Generated from Sources/UVHTTP1/UVHTTP1.docc/UsingUVHTTP1InAHarness.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import UVHTTP1

// Sources/UVHTTP1/UVHTTP1.docc/UsingUVHTTP1InAHarness.md, swift block 1
func using_uvhttp1_in_aharness_1() throws {
    func checkSplitInvariance(_ stream: [UInt8]) {
        func read(_ pieces: [[UInt8]]) -> (statuses: [Int], body: [UInt8], error: HTTP1ParseError?) {
            let parser = ResponseParser()  // strict: see ResponseParser.Options
            var statuses: [Int] = [], body: [UInt8] = []
            do {
                for piece in pieces {
                    for event in try parser.feed(piece) {
                        if case .head(let head) = event { statuses.append(head.status) }
                        if case .body(let bytes) = event { body += bytes }
                    }
                }
                _ = try parser.finish()
                return (statuses, body, nil)
            } catch { return (statuses, body, error) }
        }
        let whole = read([stream]), bytewise = read(stream.map { [$0] })
        precondition(whole.error?.kind == bytewise.error?.kind && whole.error?.offset == bytewise.error?.offset)
        if whole.error == nil { precondition(whole.statuses == bytewise.statuses && whole.body == bytewise.body) }
    }
}

// Sources/UVHTTP1/UVHTTP1.docc/UsingUVHTTP1InAHarness.md, swift block 2
func using_uvhttp1_in_aharness_2() throws {
    func events(of stream: [UInt8], requestWasHEAD: [Bool]) throws -> [ResponseParser.Event] {
        let parser = ResponseParser()
        var events: [ResponseParser.Event] = []
        var start = 0, index = 0
        try stream.withUnsafeBytes { all in
            while start < all.count && index < requestWasHEAD.count {
                parser.expectResponse(toHEAD: requestWasHEAD[index])   // before each response
                start += try parser.feed(UnsafeRawBufferPointer(rebasing: all[start...])) { events.append($0) }
                guard parser.isComplete else { break }                 // the stream ended inside it
                index += 1
            }
        }
        return events
    }
}
