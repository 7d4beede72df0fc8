import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct XMLParserResponseSerializerTests {
    /// Collects element names.
    final class Names: NSObject, XMLParserDelegate {
        var names: [String] = []
        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            names.append(elementName)
        }
    }

    @Test(arguments: ["text/xml", "application/xml; charset=utf-8"])
    func returnsAParserOverTheBody(contentType: String) throws {
        let object = try XMLParserResponseSerializer().responseObject(for: makeResponse(200, contentType: contentType),
                                                                      data: Data(utf8: "<root><child/></root>"))
        let parser = try #require(object as? XMLParser)
        let names = Names()
        parser.delegate = names
        #expect(parser.parse())
        #expect(names.names == ["root", "child"])
    }

    @Test func rejectsJSON() throws {
        let error = try #require(throws: NetworkingError.self) {
            try XMLParserResponseSerializer().responseObject(for: makeResponse(200, contentType: "application/json"), data: Data(utf8: "{}"))
        }
        #expect(error.code == .unacceptableContentType)
    }

    @Test func clientErrorStillCarriesTheParser() throws {
        let error = try #require(throws: NetworkingError.self) {
            try XMLParserResponseSerializer().responseObject(for: makeResponse(404, contentType: "text/xml"), data: Data(utf8: "<e/>"))
        }
        #expect(error.code == .unacceptableStatusCode)
        #expect(error.responseObject is XMLParser)
    }
}
