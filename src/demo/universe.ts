/** The instruments of the demo data: a small, recognisable market (prices are synthetic). */

export interface DemoEtf {
  code: string;
  name: string;
  category: string;
  assetClass: string;
  index: string;
  indexName: string;
  company: string;
  exchange: 'SH' | 'SZ';
  price: number;
  listing: string;
  /** Cross-border (QDII) ETFs: the overseas index, its region, currency pair. */
  overseas?: { ticker: string; exchange: string; region: string; currency: string; fxPair: string };
}

export const ETFS: readonly DemoEtf[] = [
  {
    code: '510300',
    name: '沪深300ETF',
    category: '宽基',
    assetClass: 'equity',
    index: '000300',
    indexName: '沪深300',
    company: '华泰柏瑞基金',
    exchange: 'SH',
    price: 3.9,
    listing: '2012-05-28',
  },
  {
    code: '510500',
    name: '中证500ETF',
    category: '宽基',
    assetClass: 'equity',
    index: '000905',
    indexName: '中证500',
    company: '南方基金',
    exchange: 'SH',
    price: 5.8,
    listing: '2013-03-15',
  },
  {
    code: '159915',
    name: '创业板ETF',
    category: '宽基',
    assetClass: 'equity',
    index: '399006',
    indexName: '创业板指',
    company: '易方达基金',
    exchange: 'SZ',
    price: 1.9,
    listing: '2011-12-09',
  },
  {
    code: '512100',
    name: '中证1000ETF',
    category: '宽基',
    assetClass: 'equity',
    index: '000852',
    indexName: '中证1000',
    company: '南方基金',
    exchange: 'SH',
    price: 2.3,
    listing: '2016-11-04',
  },
  {
    code: '518880',
    name: '黄金ETF',
    category: '商品',
    assetClass: 'commodity',
    index: 'AU9999',
    indexName: '上海金',
    company: '华安基金',
    exchange: 'SH',
    price: 5.2,
    listing: '2013-07-29',
  },
  {
    code: '513100',
    name: '纳指ETF',
    category: '跨境',
    assetClass: 'equity',
    index: 'NDX',
    indexName: '纳斯达克100',
    company: '国泰基金',
    exchange: 'SH',
    price: 1.4,
    listing: '2013-05-15',
    overseas: { ticker: 'QQQ', exchange: 'NASDAQ', region: 'US', currency: 'USD', fxPair: 'USDCNY' },
  },
  {
    code: '513500',
    name: '标普500ETF',
    category: '跨境',
    assetClass: 'equity',
    index: 'SPX',
    indexName: '标普500',
    company: '博时基金',
    exchange: 'SH',
    price: 1.8,
    listing: '2014-01-15',
    overseas: { ticker: 'SPY', exchange: 'NYSE Arca', region: 'US', currency: 'USD', fxPair: 'USDCNY' },
  },
  {
    code: '159920',
    name: '恒生ETF',
    category: '跨境',
    assetClass: 'equity',
    index: 'HSI',
    indexName: '恒生指数',
    company: '华夏基金',
    exchange: 'SZ',
    price: 1.2,
    listing: '2012-10-22',
    overseas: { ticker: '2800.HK', exchange: 'HKEX', region: 'HK', currency: 'HKD', fxPair: 'HKDCNY' },
  },
];

export interface DemoIndex {
  code: string;
  name: string;
  fullName: string;
  publisher: string;
  category: string;
  level: number;
  baseDate: string;
  basePoint: number;
  pe: number;
  pb: number;
}

export const INDEXES: readonly DemoIndex[] = [
  {
    code: '000300',
    name: '沪深300',
    fullName: '沪深300指数',
    publisher: '中证指数有限公司',
    category: '规模',
    level: 3800,
    baseDate: '2004-12-31',
    basePoint: 1000,
    pe: 12.5,
    pb: 1.3,
  },
  {
    code: '000905',
    name: '中证500',
    fullName: '中证小盘500指数',
    publisher: '中证指数有限公司',
    category: '规模',
    level: 5600,
    baseDate: '2004-12-31',
    basePoint: 1000,
    pe: 22,
    pb: 1.7,
  },
  {
    code: '399006',
    name: '创业板指',
    fullName: '创业板指数',
    publisher: '深圳证券信息有限公司',
    category: '规模',
    level: 1900,
    baseDate: '2010-05-31',
    basePoint: 1000,
    pe: 30,
    pb: 4,
  },
  {
    code: '000852',
    name: '中证1000',
    fullName: '中证1000指数',
    publisher: '中证指数有限公司',
    category: '规模',
    level: 6000,
    baseDate: '2004-12-31',
    basePoint: 1000,
    pe: 35,
    pb: 2.2,
  },
  {
    code: 'NDX',
    name: 'Nasdaq-100',
    fullName: 'Nasdaq-100 Index',
    publisher: 'Nasdaq',
    category: '海外',
    level: 18000,
    baseDate: '1985-01-31',
    basePoint: 125,
    pe: 32,
    pb: 7,
  },
  {
    code: 'SPX',
    name: 'S&P 500',
    fullName: 'S&P 500 Index',
    publisher: 'S&P Dow Jones Indices',
    category: '海外',
    level: 5200,
    baseDate: '1941-01-01',
    basePoint: 10,
    pe: 24,
    pb: 4.5,
  },
  {
    code: 'HSI',
    name: '恒生指数',
    fullName: 'Hang Seng Index',
    publisher: '恒生指数有限公司',
    category: '海外',
    level: 17000,
    baseDate: '1964-07-31',
    basePoint: 100,
    pe: 9.5,
    pb: 1.0,
  },
];

export const FX_PAIRS: readonly { pair: string; rate: number }[] = [
  { pair: 'USDCNY', rate: 7.15 },
  { pair: 'HKDCNY', rate: 0.915 },
  { pair: 'EURCNY', rate: 7.8 },
];

export interface DemoStock {
  code: string;
  name: string;
  price: number;
  /** Shenwan level-1 code and name; level-2 and level-3 are derived. */
  sw: [string, string, string, string, string, string];
  shares: number;
  pe: number;
  pb: number;
}

export const STOCKS: readonly DemoStock[] = [
  {
    code: '600519',
    name: '贵州茅台',
    price: 1700,
    sw: ['801120', '食品饮料', '801125', '白酒Ⅱ', '851251', '白酒Ⅲ'],
    shares: 1.256e9,
    pe: 25,
    pb: 8,
  },
  {
    code: '000858',
    name: '五粮液',
    price: 140,
    sw: ['801120', '食品饮料', '801125', '白酒Ⅱ', '851251', '白酒Ⅲ'],
    shares: 3.88e9,
    pe: 16,
    pb: 4,
  },
  {
    code: '000001',
    name: '平安银行',
    price: 11,
    sw: ['801780', '银行', '801783', '股份制银行Ⅱ', '857831', '股份制银行Ⅲ'],
    shares: 1.94e10,
    pe: 4.5,
    pb: 0.5,
  },
  {
    code: '600036',
    name: '招商银行',
    price: 33,
    sw: ['801780', '银行', '801783', '股份制银行Ⅱ', '857831', '股份制银行Ⅲ'],
    shares: 2.52e10,
    pe: 6,
    pb: 0.9,
  },
  {
    code: '601318',
    name: '中国平安',
    price: 45,
    sw: ['801790', '非银金融', '801194', '保险Ⅱ', '851941', '保险Ⅲ'],
    shares: 1.82e10,
    pe: 8,
    pb: 0.9,
  },
  {
    code: '000333',
    name: '美的集团',
    price: 65,
    sw: ['801110', '家用电器', '801111', '白色家电', '851112', '空调'],
    shares: 7.0e9,
    pe: 13,
    pb: 2.8,
  },
  {
    code: '300750',
    name: '宁德时代',
    price: 190,
    sw: ['801730', '电力设备', '801737', '电池', '857371', '锂电池'],
    shares: 4.4e9,
    pe: 20,
    pb: 4.5,
  },
  {
    code: '601012',
    name: '隆基绿能',
    price: 20,
    sw: ['801730', '电力设备', '801735', '光伏设备', '857351', '硅料硅片'],
    shares: 7.58e9,
    pe: 30,
    pb: 1.7,
  },
  {
    code: '002594',
    name: '比亚迪',
    price: 250,
    sw: ['801880', '汽车', '801881', '乘用车', '858811', '电动乘用车'],
    shares: 2.91e9,
    pe: 22,
    pb: 4.8,
  },
  {
    code: '600900',
    name: '长江电力',
    price: 28,
    sw: ['801160', '公用事业', '801161', '电力', '851611', '水力发电'],
    shares: 2.45e10,
    pe: 22,
    pb: 3.4,
  },
];

export interface DemoCompany {
  cik: string;
  name: string;
  ticker: string;
  exchange: string;
  sic: string;
  sicDescription: string;
  state: string;
  fye: string;
  ein: string;
  cusip: string;
  price: number;
  /** Annual revenue, USD. */
  revenue: number;
  margin: number;
  shares: number;
}

export const COMPANIES: readonly DemoCompany[] = [
  {
    cik: '0000320193',
    name: 'Apple Inc.',
    ticker: 'AAPL',
    exchange: 'Nasdaq',
    sic: '3571',
    sicDescription: 'Electronic Computers',
    state: 'CA',
    fye: '0928',
    ein: '942404110',
    cusip: '037833100',
    price: 190,
    revenue: 3.9e11,
    margin: 0.25,
    shares: 1.53e10,
  },
  {
    cik: '0000789019',
    name: 'MICROSOFT CORP',
    ticker: 'MSFT',
    exchange: 'Nasdaq',
    sic: '7372',
    sicDescription: 'Services-Prepackaged Software',
    state: 'WA',
    fye: '0630',
    ein: '911144442',
    cusip: '594918104',
    price: 420,
    revenue: 2.45e11,
    margin: 0.36,
    shares: 7.43e9,
  },
  {
    cik: '0001045810',
    name: 'NVIDIA CORP',
    ticker: 'NVDA',
    exchange: 'Nasdaq',
    sic: '3674',
    sicDescription: 'Semiconductors & Related Devices',
    state: 'DE',
    fye: '0126',
    ein: '943177549',
    cusip: '67066G104',
    price: 120,
    revenue: 1.3e11,
    margin: 0.55,
    shares: 2.45e10,
  },
  {
    cik: '0001318605',
    name: 'Tesla, Inc.',
    ticker: 'TSLA',
    exchange: 'Nasdaq',
    sic: '3711',
    sicDescription: 'Motor Vehicles & Passenger Car Bodies',
    state: 'TX',
    fye: '1231',
    ein: '912197729',
    cusip: '88160R101',
    price: 250,
    revenue: 9.7e10,
    margin: 0.07,
    shares: 3.2e9,
  },
  {
    cik: '0000019617',
    name: 'JPMORGAN CHASE & CO',
    ticker: 'JPM',
    exchange: 'NYSE',
    sic: '6021',
    sicDescription: 'National Commercial Banks',
    state: 'DE',
    fye: '1231',
    ein: '132624428',
    cusip: '46625H100',
    price: 200,
    revenue: 1.6e11,
    margin: 0.3,
    shares: 2.8e9,
  },
];

export const FILERS: readonly { cik: string; name: string }[] = [
  { cik: '0001067983', name: 'BERKSHIRE HATHAWAY INC' },
  { cik: '0001364742', name: 'BlackRock Inc.' },
];

export const MACRO: readonly {
  name: string;
  unit: string;
  frequency: 'M' | 'Q';
  level: number;
  step: number;
}[] = [
  { name: 'CPI', unit: '%', frequency: 'M', level: 0.5, step: 0.3 },
  { name: 'PPI', unit: '%', frequency: 'M', level: -2.0, step: 0.4 },
  { name: 'PMI', unit: 'index', frequency: 'M', level: 49.8, step: 0.6 },
  { name: 'M2', unit: 'CNY 100m', frequency: 'M', level: 3.1e6, step: 2.5e4 },
  { name: 'GDP', unit: '%', frequency: 'Q', level: 5.0, step: 0.3 },
];
