// Files written whole: the content, no temporary file left, the target untouched on failure.
#include "artifact/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "scratch.h"

namespace artifact {
namespace {

class CommonAtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_path("artifact_atomic");
    ::mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override {
    for (const std::string& name : files()) ::unlink((dir_ + "/" + name).c_str());
    ::rmdir(dir_.c_str());
  }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') names.push_back(e->d_name);
      ::closedir(d);
    }
    return names;
  }
  static std::string read(const std::string& path) {
    std::ostringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
  }
  std::string dir_;
};

TEST_F(CommonAtomicFile, WritesTheWholeTextAndNoTemporaryFile) {
  const std::string path = dir_ + "/out.csv";
  write_file_atomically(path, "a,b\n1,2\n");
  EXPECT_EQ(read(path), "a,b\n1,2\n");
  write_file_atomically(path, "replaced\n");
  EXPECT_EQ(read(path), "replaced\n");
  EXPECT_EQ(files(), std::vector<std::string>{"out.csv"});
}

TEST_F(CommonAtomicFile, LargeAndSmallWritesKeepTheirOrder) {
  const std::string path = dir_ + "/big";
  std::string expected, big(3 << 20, 'x');
  {
    AtomicFile f(path);
    for (int i = 0; i < 1000; i++) {
      f.write("line " + std::to_string(i) + "\n");
      expected += "line " + std::to_string(i) + "\n";
    }
    f.write(big);
    expected += big;
    f.write("end\n");
    expected += "end\n";
    f.commit();
  }
  EXPECT_EQ(read(path), expected);
}

TEST_F(CommonAtomicFile, WithoutCommitNothingIsWritten) {
  const std::string path = dir_ + "/kept";
  write_file_atomically(path, "old\n");
  {
    AtomicFile f(path);
    f.write("new\n");
  }
  EXPECT_EQ(read(path), "old\n");
  EXPECT_EQ(files(), std::vector<std::string>{"kept"});
}

TEST_F(CommonAtomicFile, AnUnwritablePathIsAFileError) {
  const std::string path = dir_ + "/missing/out.csv";
  EXPECT_THROW(write_file_atomically(path, "x"), FileError);
  std::string error;
  EXPECT_FALSE(write_file_atomically(path, "x", error));
  EXPECT_EQ(error.rfind("cannot create " + path + ".tmp.", 0), 0u) << error;
  // the name escaped (artifact/quote.h): a NUL cannot end the message early, a newline forge a line
  EXPECT_FALSE(write_file_atomically(dir_ + "/missing\n/out.csv", "x", error));
  EXPECT_EQ(error.rfind("cannot create " + dir_ + "/missing\\n/out.csv.tmp.", 0), 0u) << error;
}

}  // namespace
}  // namespace artifact
