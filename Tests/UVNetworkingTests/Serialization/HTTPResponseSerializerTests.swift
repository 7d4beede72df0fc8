import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct HTTPResponseSerializerTests {
    let body = Data(utf8: "body")

    @Test func every2xxIsValidAndReturnsTheDataUnchanged() throws {
        let serializer = HTTPResponseSerializer()
        for status in 200...299 {
            let object = try serializer.responseObject(for: makeResponse(status), data: body)
            #expect(object as? Data == body, "status \(status)")
        }
    }

    /// The session's path, given the head's integer status: the same verdicts as the public
    /// method, whether it can skip building a validation (any type) or not (types set).
    @Test func validatingWithTheHeadsStatusGivesThePublicVerdicts() throws {
        var serializer = HTTPResponseSerializer()
        for status in [100, 199, 200, 204, 299, 300, 404, 500] {
            let response = makeResponse(status, contentType: "text/html")
            let expected = serializer.validationError(for: response, data: body)?.code
            let got: NetworkingError.Code?
            do {
                let object = try serializer.responseObject(for: response, data: body, statusCode: status)
                #expect(object as? Data == body, "status \(status)")
                got = nil
            } catch let error as NetworkingError {
                got = error.code
            }
            #expect(got == expected, "status \(status)")
        }
        serializer.acceptableContentTypes = ["application/json"]
        #expect(throws: NetworkingError.self) {
            try serializer.responseObject(for: makeResponse(200, contentType: "text/html"), data: body, statusCode: 200)
        }
        serializer.acceptableContentTypes = nil
        serializer.acceptableStatusCodes = IndexSet(integer: 404)
        #expect(throws: NetworkingError.self) {
            try serializer.responseObject(for: makeResponse(200), data: body, statusCode: 200)
        }
        #expect(try serializer.responseObject(for: makeResponse(404), data: body, statusCode: 404) as? Data == body)
    }

    @Test func every4xxAnd5xxIsInvalid() {
        let serializer = HTTPResponseSerializer()
        for status in 400...599 {
            #expect(throws: NetworkingError.self, "status \(status)") {
                try serializer.responseObject(for: makeResponse(status), data: body)
            }
            #expect(serializer.validationError(for: makeResponse(status), data: body)?.code == .unacceptableStatusCode)
        }
    }

    @Test func statusErrorCarriesResponseBodyMessageAndTheData() throws {
        let response = makeResponse(404, reason: "Not Found", contentType: "text/html")
        let error = try #require(throws: NetworkingError.self) {
            try HTTPResponseSerializer().responseObject(for: response, data: body)
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.detail == "Request failed: not found (404)")
        #expect(error.response == response)
        #expect(error.responseData == body)
        #expect(error.underlyingError == nil)
        // AFHTTPResponseSerializer returns the data whatever the validation said.
        #expect(error.responseObject as? Data == body)
    }

    @Test func statusWithoutReasonPhraseNamesTheClass() {
        let error = HTTPResponseSerializer().validationError(for: makeResponse(503), data: nil)
        #expect(error?.detail == "Request failed: server error (503)")
    }

    @Test func acceptableStatusCodesAreConfigurable() throws {
        var serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = IndexSet([200, 404])
        #expect(try serializer.responseObject(for: makeResponse(404), data: body) as? Data == body)
        #expect(serializer.validationError(for: makeResponse(201), data: body)?.code == .unacceptableStatusCode)
    }

    @Test func acceptableStatusCodesChangedInPlaceAreHonoured() {
        var serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes.remove(204)
        serializer.acceptableStatusCodes.insert(404)
        #expect(serializer.validationError(for: makeResponse(204), data: body)?.code == .unacceptableStatusCode)
        #expect(serializer.validationError(for: makeResponse(404), data: body) == nil)
        #expect(serializer.validationError(for: makeResponse(200), data: body) == nil)
        serializer.acceptableStatusCodes = IndexSet(integersIn: 200..<300)
        #expect(serializer.validationError(for: makeResponse(204), data: body) == nil)
        #expect(serializer.validationError(for: makeResponse(404), data: body)?.code == .unacceptableStatusCode)
    }

    @Test func anyContentTypeByDefault() throws {
        let serializer = HTTPResponseSerializer()
        #expect(serializer.acceptableContentTypes == nil)
        #expect(serializer.validationError(for: makeResponse(200, contentType: "image/png"), data: body) == nil)
        #expect(serializer.validationError(for: makeResponse(200), data: body) == nil)
    }

    private var jsonOnly: HTTPResponseSerializer {
        var serializer = HTTPResponseSerializer()
        serializer.acceptableContentTypes = ["application/json"]
        return serializer
    }

    @Test func missingTypeWithEmptyBodyPasses() {
        #expect(jsonOnly.validationError(for: makeResponse(200), data: Data()) == nil)
        #expect(jsonOnly.validationError(for: makeResponse(204), data: nil) == nil)
    }

    @Test func missingTypeWithBodyFails() {
        let error = jsonOnly.validationError(for: makeResponse(200), data: body)
        #expect(error?.code == .unacceptableContentType)
        #expect(error?.detail == "Request failed: unacceptable content-type: (null)")
    }

    @Test func wrongTypeFailsWithTheType() {
        let response = makeResponse(200, contentType: "text/html; charset=utf-8")
        let error = jsonOnly.validationError(for: response, data: body)
        #expect(error?.code == .unacceptableContentType)
        #expect(error?.detail == "Request failed: unacceptable content-type: text/html")
        #expect(error?.response == response)
        #expect(error?.responseData == body)
    }

    @Test func wrongTypeWithEmptyBodyPassesAsInAFNetworking() {
        #expect(jsonOnly.validationError(for: makeResponse(200, contentType: "text/html"), data: Data()) == nil)
    }

    @Test(arguments: ["application/json", "application/json; charset=utf-8", "Application/JSON", " APPLICATION/json ;charset=UTF-8"])
    func parametersAndCaseAreIgnored(contentType: String) {
        #expect(jsonOnly.validationError(for: makeResponse(200, contentType: contentType), data: body) == nil)
    }

    @Test func configuredTypesAreCaseInsensitiveToo() {
        var serializer = HTTPResponseSerializer()
        serializer.acceptableContentTypes = ["Application/Vnd.API+JSON"]
        #expect(serializer.validationError(for: makeResponse(200, contentType: "application/vnd.api+json"), data: body) == nil)
    }

    @Test func bothFailuresGiveTheStatusErrorOverTheContentTypeError() throws {
        let response = makeResponse(500, reason: "Internal Server Error", contentType: "text/html")
        let error = try #require(jsonOnly.validationError(for: response, data: body))
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.detail == "Request failed: internal server error (500)")
        let underlying = try #require(error.underlyingError as? NetworkingError)
        #expect(underlying.code == .unacceptableContentType)
        #expect(underlying.detail == "Request failed: unacceptable content-type: text/html")
        #expect(underlying.responseData == body)
    }

    @Test func validateThrowsWhatValidationErrorReturns() {
        #expect(throws: NetworkingError.self) { try jsonOnly.validate(makeResponse(200, contentType: "text/plain"), data: body) }
        #expect(throws: Never.self) { try jsonOnly.validate(makeResponse(200, contentType: "application/json"), data: body) }
    }
}
