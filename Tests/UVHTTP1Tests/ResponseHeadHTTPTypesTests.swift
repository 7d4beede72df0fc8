import HTTPTypes
import Testing
@testable import UVHTTP1

/// The conversion of a received head into swift-http-types, done on the worker pool.
@Suite(.tags(.unit)) struct ResponseHeadHTTPTypesTests {
    private func head(_ fields: ReceivedFields) -> ResponseHead {
        ResponseHead(versionMajor: 1, versionMinor: 1, status: 404, reason: "Not Found", headers: fields, keepAlive: true)
    }

    @Test func fieldsKeepOrderDuplicatesAndSpelling() {
        let response = head([
            HeaderField(name: "Content-Type", value: "text/plain"),
            HeaderField(name: "content-type", value: "text/html"),
            HeaderField(name: "X-Custom", value: "a"),
            HeaderField(name: "ETag", value: "\"1\""),
            HeaderField(name: "Set-Cookie", value: "a=1"),
            HeaderField(name: "Set-Cookie", value: "b=2"),
        ]).httpResponse
        #expect(response.status.code == 404)
        #expect(response.status.reasonPhrase == "Not Found")
        #expect(response.headerFields.map(\.name.rawName) == ["Content-Type", "content-type", "X-Custom", "ETag", "Set-Cookie", "Set-Cookie"])
        #expect(response.headerFields.map(\.value) == ["text/plain", "text/html", "a", "\"1\"", "a=1", "b=2"])
        #expect(response.headerFields[values: .contentType] == ["text/plain", "text/html"])
        #expect(response.headerFields[HTTPField.Name("x-custom")!] == "a")
    }

    @Test func aHeadBuiltFromAResponseHandsItBackAndAppendedFieldsReadBack() {
        var fields = HTTPFields()
        fields[.contentType] = "text/plain"
        fields[.age] = "7"
        let response = HTTPResponse(status: .init(code: 203, reasonPhrase: "Stored"), headerFields: fields)
        // The appended field's bytes go after the section, which stays as it was.
        let received = ReceivedFields(bytes: Array("Content-Typetext/plainX-Foldab".utf8),
                                      bounds: [.init(nameStart: 0, nameEnd: 12, valueStart: 12, valueEnd: 22),
                                               .init(nameStart: 22, nameEnd: 28, valueStart: 28, valueEnd: 30)])
        let appended = received.appending(name: "Age", value: "7")
        #expect(appended.map { "\($0.name): \($0.value)" } == ["Content-Type: text/plain", "X-Fold: ab", "Age: 7"])
        #expect(received.count == 2)
        #expect(appended.withSectionBytes { Array($0) } == received.withSectionBytes { Array($0) })
        #expect(ReceivedFields().appending(name: "A", value: "").map(\.name) == ["A"])
        let head = ResponseHead.built(response, headers: appended)
        #expect(head.status == 203 && head.reason == "Stored" && head.keepAlive)
        #expect(head.httpResponse == response)
        #expect(head.httpFields == fields)
        #expect(head.fields.firstValue(named: "age") == "7")
    }

    @Test func commonNamesSpelledDifferentlyKeepThePeersSpelling() {
        let response = head([HeaderField(name: "CONTENT-LENGTH", value: "0")]).httpResponse
        #expect(response.headerFields.first?.name.rawName == "CONTENT-LENGTH")
        #expect(response.headerFields[.contentLength] == "0")
    }

    @Test func obsTextValueKeepsItsBytes() {
        let fields = ReceivedFields(bytes: Array("Xcaf".utf8) + [0xE9], bounds: [.init(nameStart: 0, nameEnd: 1, valueStart: 1, valueEnd: 5)])
        let field = head(fields).httpResponse.headerFields.first
        #expect(field?.name.rawName == "X")
        #expect(field?.withUnsafeBytesOfValue { Array($0) } == Array("caf".utf8) + [0xE9])
        #expect(field?.value.unicodeScalars.last == "\u{FFFD}")
    }

    @Test func aFieldNameIsFoundInTheRawFieldsWhateverItsCase() {
        let fields: ReceivedFields = [HeaderField(name: "Set-Cookiex", value: "a=1"), HeaderField(name: "Set-Cooki", value: "set-cookie"),
                                      HeaderField(name: "X", value: "")]
        #expect(!fields.contains(lowercaseName: "set-cookie"))
        #expect(fields.contains(lowercaseName: "x"))
        #expect(([HeaderField(name: "Date", value: "now"), HeaderField(name: "SET-cookie", value: "a=1")] as ReceivedFields)
            .contains(lowercaseName: "set-cookie"))
        #expect(!ReceivedFields().contains(lowercaseName: "set-cookie"))
    }

    @Test func noFieldsIsAnEmptyFieldList() {
        #expect(head([]).httpResponse.headerFields.isEmpty)
    }
}
