import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct PropertyListResponseSerializerTests {
    let ok = makeResponse(200, contentType: "application/x-plist")
    let plist = Data(utf8: """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>name</key><string>uv</string><key>n</key><integer>3</integer></dict></plist>
        """)

    @Test func defaults() {
        let serializer = PropertyListResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/x-plist"])
        #expect(serializer.format == .xml)
        #expect(serializer.readOptions == [])
    }

    @Test func parsesAnXMLPropertyList() throws {
        let object = try PropertyListResponseSerializer().responseObject(for: ok, data: plist)
        let dictionary = try #require(object as? [AnyHashable: Any])
        #expect(dictionary["name"] as? String == "uv")
        #expect(dictionary["n"] as? Int == 3)
    }

    @Test func parsesABinaryPropertyList() throws {
        let binary = try PropertyListSerialization.data(fromPropertyList: ["k": "v"], format: .binary, options: 0)
        let object = try PropertyListResponseSerializer().responseObject(for: ok, data: binary)
        #expect((object as? [AnyHashable: Any])?["k"] as? String == "v")
    }

    @Test func emptyBodyIsNil() throws {
        #expect(try PropertyListResponseSerializer().responseObject(for: ok, data: Data()) == nil)
    }

    @Test func garbageIsSerializationFailed() throws {
        let error = try #require(throws: NetworkingError.self) {
            try PropertyListResponseSerializer().responseObject(for: ok, data: Data(utf8: "not a plist <"))
        }
        #expect(error.code == .serializationFailed)
        #expect(error.responseData == Data(utf8: "not a plist <"))
    }

    @Test func rejectsOtherTypes() throws {
        let error = try #require(throws: NetworkingError.self) {
            try PropertyListResponseSerializer().responseObject(for: makeResponse(200, contentType: "text/xml"), data: plist)
        }
        #expect(error.code == .unacceptableContentType)
    }
}
