import Testing
import UVFetchCore

@Suite(.tags(.unit)) struct WARCFileNamingTests {
    @Test func oneFileIsNamedAsGiven() {
        #expect(WARCFileNaming(path: "out/crawl.warc.gz", isNumbered: false).name(serial: 0) == "out/crawl.warc.gz")
    }

    @Test(arguments: [("crawl.warc.gz", "crawl-00000.warc.gz", "crawl-00012.warc.gz"),
                      ("d/crawl.warc", "d/crawl-00000.warc", "d/crawl-00012.warc"),
                      ("crawl", "crawl-00000", "crawl-00012"),
                      (".warc.gz", ".warc.gz-00000", ".warc.gz-00012")])
    func numberedFilesGetASerialBeforeTheirEnding(path: String, first: String, thirteenth: String) {
        let naming = WARCFileNaming(path: path, isNumbered: true)
        #expect(naming.name(serial: 0) == first)
        #expect(naming.name(serial: 12) == thirteenth)
    }

    @Test func serialsPastFiveDigitsKeepCounting() {
        #expect(WARCFileNaming(path: "a.warc.gz", isNumbered: true).name(serial: 123_456) == "a-123456.warc.gz")
    }
}

@Suite(.tags(.unit)) struct ByteSizeTests {
    @Test(arguments: [("100", 100), ("64K", 65_536), ("100M", 104_857_600), ("1G", 1 << 30), ("2gib", 2 << 30),
                      ("3MB", 3 << 20), ("1t", 1 << 40)] as [(String, Int64)])
    func sizesWithSuffixes(text: String, bytes: Int64) {
        #expect(ByteSize(argument: text)?.bytes == bytes)
    }

    @Test(arguments: ["", "0", "-1", "M", "1.5G", "10X", "99999999999T", "1 M"])
    func badSizesAreRefused(text: String) {
        #expect(ByteSize(argument: text) == nil)
    }
}
