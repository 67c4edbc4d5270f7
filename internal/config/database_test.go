package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDatabaseURL(t *testing.T) {
	const sqliteOpts = "?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate"
	tests := []struct {
		name string
		url  string
		want DatabaseTarget
	}{
		{
			name: "pymysql with charset utf8 keeps the charset",
			url:  "mysql+pymysql://magnum:s3cret@db.example:3307/magnum?charset=utf8",
			want: DatabaseTarget{DialectMySQL,
				"magnum:s3cret@tcp(db.example:3307)/magnum?charset=utf8&loc=UTC&parseTime=true&timeout=10s",
				"mysql+pymysql://magnum:***@db.example:3307/magnum?charset=utf8"},
		},
		{
			name: "plain mysql defaults to utf8mb4 and port 3306",
			url:  "mysql://magnum:pw@db/magnum",
			want: DatabaseTarget{DialectMySQL,
				"magnum:pw@tcp(db:3306)/magnum?charset=utf8mb4&loc=UTC&parseTime=true&timeout=10s",
				"mysql://magnum:***@db/magnum"},
		},
		{
			name: "mysqldb, encoded password, pymysql plugin dropped, connect_timeout kept",
			url:  "mysql+mysqldb://magnum:p%40ss%3Aw%2Frd@10.0.0.5/magnum?plugin=dbcounter&connect_timeout=3",
			want: DatabaseTarget{DialectMySQL,
				"magnum:p@ss:w/rd@tcp(10.0.0.5:3306)/magnum?charset=utf8mb4&loc=UTC&parseTime=true&timeout=3s",
				"mysql+mysqldb://magnum:***@10.0.0.5/magnum?plugin=dbcounter&connect_timeout=3"},
		},
		{
			name: "unix socket",
			url:  "mysql+pymysql://magnum:pw@/magnum?unix_socket=/var/run/mysqld/mysqld.sock",
			want: DatabaseTarget{DialectMySQL,
				"magnum:pw@unix(/var/run/mysqld/mysqld.sock)/magnum?charset=utf8mb4&loc=UTC&parseTime=true&timeout=10s",
				"mysql+pymysql://magnum:***@/magnum?unix_socket=/var/run/mysqld/mysqld.sock"},
		},
		{
			name: "IPv6 host and no password",
			url:  "mysql://root@[::1]:3306/magnum",
			want: DatabaseTarget{DialectMySQL,
				"root@tcp([::1]:3306)/magnum?charset=utf8mb4&loc=UTC&parseTime=true&timeout=10s",
				"mysql://root@[::1]:3306/magnum"},
		},
		{
			name: "postgresql",
			url:  "postgresql://magnum:pw@pg.example:5433/magnum",
			want: DatabaseTarget{DialectPostgres,
				"postgres://magnum:pw@pg.example:5433/magnum?connect_timeout=10",
				"postgresql://magnum:***@pg.example:5433/magnum"},
		},
		{
			name: "psycopg2 keeps libpq parameters and drops the others",
			url:  "postgresql+psycopg2://magnum:p%2Fw%40@pg/magnum?sslmode=require&client_encoding=utf8",
			want: DatabaseTarget{DialectPostgres,
				"postgres://magnum:p%2Fw%40@pg/magnum?connect_timeout=10&sslmode=require",
				"postgresql+psycopg2://magnum:***@pg/magnum?sslmode=require&client_encoding=utf8"},
		},
		{
			name: "sqlite in memory",
			url:  "sqlite://",
			want: DatabaseTarget{DialectSQLite, ":memory:" + sqliteOpts, "sqlite://"},
		},
		{
			name: "sqlite relative path",
			url:  "sqlite:///magnum.sqlite",
			want: DatabaseTarget{DialectSQLite, "magnum.sqlite" + sqliteOpts, "sqlite:///magnum.sqlite"},
		},
		{
			name: "sqlite absolute path",
			url:  "sqlite:////var/lib/magnum/magnum.sqlite",
			want: DatabaseTarget{DialectSQLite, "/var/lib/magnum/magnum.sqlite" + sqliteOpts, "sqlite:////var/lib/magnum/magnum.sqlite"},
		},
		{
			name: "surrounding whitespace",
			url:  "  sqlite:///:memory:\n",
			want: DatabaseTarget{DialectSQLite, ":memory:" + sqliteOpts, "sqlite:///:memory:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDatabaseURL(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDatabaseURLErrors(t *testing.T) {
	tests := []struct{ name, url, want string }{
		{"empty", "", "[database]/connection is not set"},
		{"no scheme", "magnum:topsecret@db/magnum", "not of the form"},
		{"unsupported dialect", "oracle://u:topsecret@h/db", `unsupported dialect "oracle"`},
		{"bad port", "mysql://u:topsecret@h:99999/db", `port "99999"`},
		{"sqlite with a host", "sqlite://u:topsecret@host/x.db", "no host or credentials"},
		{"bad connect_timeout", "postgresql://u:topsecret@h/db?connect_timeout=soon", `connect_timeout "soon"`},
		{"odd charset", "mysql://u:topsecret@h/db?charset=utf8;drop", `charset "utf8;drop"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDatabaseURL(tt.url)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "topsecret") {
				t.Errorf("error %q leaks the password", err)
			}
			if !errors.Is(err, ErrDatabaseURL) {
				t.Errorf("error %v does not match ErrDatabaseURL", err)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mysql://u:pw@h/db", "mysql://u:***@h/db"},
		{"mysql://u@h/db", "mysql://u@h/db"},
		{"mysql://u:p@w@h/db", "mysql://u:***@h/db"},
		{"mysql://u:pa/ss@h/db", "mysql://u:***@h/db"},
		{"mysql://h/db?x=a@b", "mysql://h/db?x=a@b"},
		{"mysql://u:pw@h/db?x=a@b", "mysql://u:***@b"},
		{"0://?@:0000@", "0://?@:***@"},
		{"sqlite://", "sqlite://"},
		{"u:pw@h", "<unparsable URL>"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOptionsDatabaseTarget(t *testing.T) {
	o, _, err := loadString(t, "[database]\nconnection = mysql+pymysql://m:pw@db/magnum\nconnection_parameters = charset=latin1\n")
	if err != nil {
		t.Fatal(err)
	}
	got, err := o.DatabaseTarget()
	if err != nil {
		t.Fatal(err)
	}
	want := "m:pw@tcp(db:3306)/magnum?charset=latin1&loc=UTC&parseTime=true&timeout=10s"
	if got.DSN != want {
		t.Errorf("DSN = %q, want %q", got.DSN, want)
	}
	if _, err := Defaults().DatabaseTarget(); !errors.Is(err, ErrDatabaseURL) {
		t.Errorf("unset connection: %v", err)
	}
}
